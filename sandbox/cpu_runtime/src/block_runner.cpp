// SPDX-License-Identifier: Apache-2.0
#include "block_runner.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <climits>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <utility>

#include "leap/detail/mix64.hpp"

namespace leap::cpu_runtime::detail {
namespace {

// The next word of a block's random stream: the mix of a counter (splitmix64).
std::uint64_t next_random(std::uint64_t& state) {
  const std::uint64_t r = ::leap::detail::mix64(state);
  state += 0x9E3779B97F4A7C15ULL;
  return r;
}

const char* barrier_name(int op) {
  switch (static_cast<abi::BarrierOp>(op)) {
    case abi::BarrierOp::sync: return "__syncthreads";
    case abi::BarrierOp::count: return "__syncthreads_count";
    case abi::BarrierOp::all: return "__syncthreads_and";
    case abi::BarrierOp::any: return "__syncthreads_or";
  }
  return "a barrier";
}

constexpr int k_active_mask_op = -1;  // a lane waiting in __activemask (at_warp, no mask)

const char* warp_name(int op) {
  if (op == k_active_mask_op) return "__activemask";
  switch (static_cast<abi::WarpOp>(op)) {
    case abi::WarpOp::sync: return "__syncwarp";
    case abi::WarpOp::shfl_idx: return "__shfl_sync";
    case abi::WarpOp::shfl_up: return "__shfl_up_sync";
    case abi::WarpOp::shfl_down: return "__shfl_down_sync";
    case abi::WarpOp::shfl_xor: return "__shfl_xor_sync";
    case abi::WarpOp::ballot: return "__ballot_sync";
    case abi::WarpOp::any: return "__any_sync";
    case abi::WarpOp::all: return "__all_sync";
    case abi::WarpOp::match_any: return "__match_any_sync";
    case abi::WarpOp::match_all: return "__match_all_sync";
    case abi::WarpOp::reduce_add: return "__reduce_add_sync";
    case abi::WarpOp::reduce_min_unsigned:
    case abi::WarpOp::reduce_min_signed: return "__reduce_min_sync";
    case abi::WarpOp::reduce_max_unsigned:
    case abi::WarpOp::reduce_max_signed: return "__reduce_max_sync";
    case abi::WarpOp::reduce_and: return "__reduce_and_sync";
    case abi::WarpOp::reduce_or: return "__reduce_or_sync";
    case abi::WarpOp::reduce_xor: return "__reduce_xor_sync";
  }
  return "a warp collective";
}

std::string hex(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

std::string location(const abi::Where& w) {
  return std::string(w.file != nullptr ? w.file : "?") + ":" + std::to_string(w.line);
}

bool same_place(const abi::Where& a, const abi::Where& b) {
  if (a.line != b.line) return false;
  return a.file == b.file || std::strcmp(a.file != nullptr ? a.file : "", b.file != nullptr ? b.file : "") == 0;
}

// Where a thread stands, in words; threads with equal words are listed as one range.
std::string standing(const ThreadRec& t) {
  switch (t.status) {
    case Status::exited: return "exited";
    case Status::at_barrier: return std::string("waiting at ") + barrier_name(t.op) + " (" + location(t.where) + ")";
    case Status::at_warp:
      if (t.op == k_active_mask_op) return std::string("waiting at __activemask (") + location(t.where) + ")";
      return std::string("waiting at ") + warp_name(t.op) + " with mask " + hex(t.mask) + " (" + location(t.where) +
             ")";
    case Status::unstarted: return "not started";
    case Status::ready: return "ready";
    case Status::running: return "running";
  }
  return "?";
}

// Holds the runtime's side of a hook: the signal handler must not escape from the runtime's own code.
class RuntimeSection {
 public:
  explicit RuntimeSection(volatile int& in_kernel) : in_kernel_(in_kernel) {
    in_kernel_ = 0;
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  ~RuntimeSection() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    in_kernel_ = 1;
  }
  RuntimeSection(const RuntimeSection&) = delete;
  RuntimeSection& operator=(const RuntimeSection&) = delete;

 private:
  volatile int& in_kernel_;
};

}  // namespace

BlockRunner::BlockRunner(const LaunchShape& shape, StackPool& stacks, const Arena& arena, unsigned char poison)
    : shape_(shape),
      stacks_(stacks),
      threads_(shape.threads),
      ready_((shape.threads + 63) / 64, 0),
      at_warp_((shape.threads + abi::k_warp_size - 1) / abi::k_warp_size, 0),
      at_active_mask_(at_warp_.size(), 0) {
  const Dim3 b = shape_.block;
  for (unsigned i = 0; i < shape_.threads; ++i) {
    ThreadRec& r = threads_[i];
    r.runner = this;
    abi::ThreadState& st = r.state;
    st.thread_idx = {i % b.x, (i / b.x) % b.y, i / (b.x * b.y)};
    st.block_dim = {b.x, b.y, b.z};
    st.grid_dim = {shape_.grid.x, shape_.grid.y, shape_.grid.z};
    st.linear_tid = i;
    st.lane = i % abi::k_warp_size;
    st.warp = i / abi::k_warp_size;
    st.block_threads = shape_.threads;
    st.static_shared = arena.static_base();
    st.static_shared_bytes = Arena::k_static_bytes;
    st.dynamic_shared = arena.dynamic_base();
    st.dynamic_shared_bytes = arena.dynamic_bytes();
    st.poison = poison;
  }
}

std::string BlockRunner::block_name() const {
  return "block (" + std::to_string(block_.x) + "," + std::to_string(block_.y) + "," + std::to_string(block_.z) + ")";
}

std::string BlockRunner::thread_name(const ThreadRec& t) const {
  const auto& i = t.state.thread_idx;
  return "thread " + std::to_string(t.state.linear_tid) + " (" + std::to_string(i.x) + "," + std::to_string(i.y) + "," +
         std::to_string(i.z) + ")";
}

std::string BlockRunner::describe_waits() const {
  std::string out;
  std::size_t first = 0;
  while (first < threads_.size()) {
    const std::string words = standing(threads_[first]);
    std::size_t last = first;
    while (last + 1 < threads_.size() && standing(threads_[last + 1]) == words) ++last;
    if (!out.empty()) out += "; ";
    out += first == last ? "thread " + std::to_string(first)
                         : "threads " + std::to_string(first) + "-" + std::to_string(last);
    out += " " + words;
    first = last + 1;
  }
  return out + " (threads numbered x + y*blockDim.x + z*blockDim.x*blockDim.y)";
}

std::optional<BlockFailure> BlockRunner::run(abi::Index3 block, std::uint64_t seed) {
  block_ = block;
  for (ThreadRec& r : threads_) {
    r.state.block_idx = block;
    r.status = Status::unstarted;
    r.stack = nullptr;
  }
  for (unsigned i = 0; i < shape_.threads; ++i) ready_[i / 64] |= std::uint64_t{1} << (i % 64);
  ready_count_ = shape_.threads;
  rng_ = seed;
  live_ = shape_.threads;
  exited_ = 0;
  barrier_arrived_ = barrier_true_ = 0;
  std::fill(at_warp_.begin(), at_warp_.end(), 0u);
  std::fill(at_active_mask_.begin(), at_active_mask_.end(), 0u);
  failure_.reset();
  escape_ = {};
  if (stop_requested_ != 0) return BlockFailure{Failure::time_limit, "the launch ran past its time limit"};

  current_ = pick();
  start_stack_ = stacks_.acquire();
  handoff_ = Handoff{nullptr, true, nullptr};
  const fc::fcontext_t first = fc::make_fcontext(start_stack_->top(), start_stack_->size(), &BlockRunner::runner_entry);
  ++switches_;
  worker_identity_.tsan_fiber = current_tsan_fiber();
  void* saved = nullptr;
  before_switch(&saved, start_stack_->identity());
  const fc::transfer_t back = fc::jump_fcontext(first, this);
  after_switch(saved, nullptr);
  accept(back.fctx);
  in_kernel_ = 0;

  if (escape_.kind != Failure::none) {
    const ThreadRec& t = *current_;
    std::string what;
    if (escape_.kind == Failure::shared_out_of_range) {
      what = "read or wrote past the launch's " + std::to_string(t.state.dynamic_shared_bytes) +
             " bytes of dynamic shared memory (extern __shared__)";
    } else if (escape_.kind == Failure::stack_overflow) {
      what = "overflowed its stack (LaunchOptions::stack_bytes)";
    } else {
      what =
          "was running when the launch reached its time limit (a loop that waits for another thread of "
          "the block, or another block, never ends here: the threads of a block take turns only at barriers "
          "and warp collectives)";
    }
    failure_ = BlockFailure{escape_.kind, block_name() + ": " + thread_name(t) + " " + what};
  }
  for (ThreadRec& r : threads_) {
    if (r.stack != nullptr) stacks_.release(r.stack);
    r.stack = nullptr;
  }
  return std::move(failure_);
}

void BlockRunner::runner_entry(fc::transfer_t from) {
  auto* self = static_cast<BlockRunner*>(from.data);
  FiberIdentity left;
  after_switch(nullptr, &left);
  if (self->handoff_.from_worker) {  // the worker's stack, for the switches back to it
    self->worker_identity_.bottom = left.bottom;
    self->worker_identity_.size = left.size;
  }
  self->accept(from.fctx);
  self->runner_loop(self->start_stack_);
}

void BlockRunner::runner_loop(Stack* stack) {
  for (;;) {
    ThreadRec* t = current_;
    t->stack = stack;
    t->status = Status::running;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    in_kernel_ = 1;
    shape_.kernel->run(&t->state, shape_.args);  // may wait and resume in between, always on this stack
    in_kernel_ = 0;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t->status = Status::exited;
    --live_;
    ++exited_;
    after_exit(*t);
    check_stop();
    ThreadRec* next = pick();
    if (next == nullptr) {
      if (live_ > 0)
        fail(Failure::deadlock, [&] { return block_name() + ": deadlock, no thread can go on: " + describe_waits(); });
      leave();  // the block is done; the worker takes this stack back
    }
    t->stack = nullptr;
    current_ = next;
    if (next->status == Status::unstarted) continue;  // the next thread starts on this stack: no switch
    handoff_ = Handoff{nullptr, false, stack};        // this stack is free once we are off it
    ++switches_;
    before_switch(nullptr, next->stack->identity());
    fc::jump_fcontext(next->ctx, this);
    __builtin_unreachable();
  }
}

void BlockRunner::accept(fc::fcontext_t from) noexcept {
  const Handoff h = handoff_;
  handoff_ = {};
  if (h.from_worker) {
    worker_ctx_ = from;
  } else if (h.from != nullptr) {
    h.from->ctx = from;
  }
  if (h.release != nullptr) stacks_.release(h.release);
}

void BlockRunner::suspend(ThreadRec& t) {
  ThreadRec* next = pick();
  if (next == &t) {
    t.status = Status::running;
    return;
  }
  if (next == nullptr)
    fail(Failure::deadlock, [&] { return block_name() + ": deadlock, no thread can go on: " + describe_waits(); });
  current_ = next;
  handoff_ = Handoff{&t, false, nullptr};
  ++switches_;
  fc::transfer_t back{};
  void* saved = nullptr;
  if (next->status == Status::unstarted) {
    start_stack_ = stacks_.acquire();
    before_switch(&saved, start_stack_->identity());
    back = fc::jump_fcontext(fc::make_fcontext(start_stack_->top(), start_stack_->size(), &BlockRunner::runner_entry),
                             this);
  } else {
    before_switch(&saved, next->stack->identity());
    back = fc::jump_fcontext(next->ctx, this);
  }
  after_switch(saved, nullptr);
  accept(back.fctx);  // resumed: whoever picked this thread set current_ to it
  t.status = Status::running;
}

void BlockRunner::leave() noexcept {
  in_kernel_ = 0;
  handoff_ = Handoff{current_, false, nullptr};
  ++switches_;
  before_switch(nullptr, worker_identity_);  // this context is abandoned or done
  fc::jump_fcontext(worker_ctx_, this);
  __builtin_unreachable();
}

template <class Describe>
void BlockRunner::fail(Failure kind, Describe describe) {
  // The message is built and its temporaries freed here: the context that fails never returns, so
  // nothing of it may be left to destroy on its stack.
  failure_ = BlockFailure{kind, describe()};
  leave();
}

void BlockRunner::escape(PendingEscape why) noexcept {
  escape_ = why;
  leave();
}

void BlockRunner::check_stop() {
  if (stop_requested_ != 0)
    fail(Failure::time_limit, [&] {
      return block_name() + ": the launch ran past its time limit; where the threads stand: " + describe_waits();
    });
}

ThreadRec* BlockRunner::pick() {
  if (ready_count_ == 0) return nullptr;
  std::size_t word = 0;
  unsigned bit = 0;
  if (shape_.order == Schedule::Order::in_order) {
    while (ready_[word] == 0) ++word;
    bit = static_cast<unsigned>(std::countr_zero(ready_[word]));
  } else if (shape_.order == Schedule::Order::reversed) {
    word = ready_.size() - 1;
    while (ready_[word] == 0) --word;
    bit = 63u - static_cast<unsigned>(std::countl_zero(ready_[word]));
  } else {
    unsigned k = static_cast<unsigned>(next_random(rng_) % ready_count_);
    for (;; ++word) {
      const auto here = static_cast<unsigned>(std::popcount(ready_[word]));
      if (k < here) break;
      k -= here;
    }
    std::uint64_t w = ready_[word];
    for (; k > 0; --k) w &= w - 1;  // drop the k lowest set bits
    bit = static_cast<unsigned>(std::countr_zero(w));
  }
  ready_[word] &= ~(std::uint64_t{1} << bit);
  --ready_count_;
  return &threads_[word * 64 + bit];
}

void BlockRunner::make_ready(ThreadRec& t, std::uint64_t result) {
  const unsigned i = t.state.linear_tid;
  at_warp_[t.state.warp] &= ~(1u << t.state.lane);
  t.status = Status::ready;
  t.result = result;
  ready_[i / 64] |= std::uint64_t{1} << (i % 64);
  ++ready_count_;
}

void BlockRunner::after_exit(ThreadRec& t) {
  if (barrier_arrived_ > 0 && barrier_arrived_ == live_) release_barrier();
  const unsigned base = t.state.warp * abi::k_warp_size;
  for (unsigned waiting = at_warp_[t.state.warp]; waiting != 0; waiting &= waiting - 1) {
    const ThreadRec& r = threads_[base + static_cast<unsigned>(std::countr_zero(waiting))];
    if (r.status == Status::at_warp && r.op != k_active_mask_op && ((r.mask >> t.state.lane) & 1u) != 0)
      try_complete_warp(r);
  }
  try_complete_active_mask(t.state.warp);
}

int BlockRunner::barrier(ThreadRec& t, abi::BarrierOp op, int predicate, const abi::Where& where) {
  RuntimeSection section(in_kernel_);
  check_stop();
  t.status = Status::at_barrier;
  t.op = static_cast<int>(op);
  t.predicate = predicate;
  t.where = where;
  ++barrier_arrived_;
  if (predicate != 0) ++barrier_true_;
  if (barrier_arrived_ == live_) release_barrier();
  try_complete_active_mask(t.state.warp);
  suspend(t);
  return static_cast<int>(t.result);
}

void BlockRunner::release_barrier() {
  const ThreadRec* first = nullptr;
  for (const ThreadRec& r : threads_) {
    if (r.status != Status::at_barrier) continue;
    if (first == nullptr) {
      first = &r;
    } else if (!shape_.allow_divergent_barriers && (r.op != first->op || !same_place(r.where, first->where))) {
      fail(Failure::divergent_barrier, [&] {
        return block_name() + ": one barrier reached at different places (undefined in CUDA): " + describe_waits();
      });
    }
  }
  if (exited_ > 0 && !shape_.allow_exit_before_barrier)
    fail(Failure::barrier_after_exit,
         [&] { return block_name() + ": a barrier reached after some threads exited: " + describe_waits(); });
  std::uint64_t result = 0;
  switch (static_cast<abi::BarrierOp>(first->op)) {
    case abi::BarrierOp::sync: result = 0; break;
    case abi::BarrierOp::count: result = barrier_true_; break;
    case abi::BarrierOp::all: result = barrier_true_ == barrier_arrived_ ? 1 : 0; break;
    case abi::BarrierOp::any: result = barrier_true_ > 0 ? 1 : 0; break;
  }
  for (ThreadRec& r : threads_)
    if (r.status == Status::at_barrier) make_ready(r, result);
  barrier_arrived_ = barrier_true_ = 0;
}

std::uint64_t BlockRunner::warp(ThreadRec& t, abi::WarpOp op, unsigned mask, std::uint64_t value, unsigned source,
                                const abi::Where& where) {
  RuntimeSection section(in_kernel_);
  check_stop();
  t.where = where;
  if (((mask >> t.state.lane) & 1u) == 0) {
    fail(Failure::warp_mismatch, [&] {
      return block_name() + ": " + thread_name(t) + " (lane " + std::to_string(t.state.lane) + ") calls " +
             warp_name(static_cast<int>(op)) + " with mask " + hex(mask) + ", which does not name its own lane (" +
             location(where) + ")";
    });
  }
  t.status = Status::at_warp;
  at_warp_[t.state.warp] |= 1u << t.state.lane;
  t.op = static_cast<int>(op);
  t.mask = mask;
  t.value = value;
  t.source = source;
  try_complete_warp(t);
  try_complete_active_mask(t.state.warp);
  suspend(t);
  return t.result;
}

void BlockRunner::try_complete_warp(const ThreadRec& arriving) {
  const unsigned base = arriving.state.warp * abi::k_warp_size;
  const unsigned lanes = std::min(abi::k_warp_size, shape_.threads - base);
  const unsigned mask = arriving.mask;
  const int op = arriving.op;
  unsigned group = 0;  // the lanes that take part: in the mask, existing, not exited
  for (unsigned l = 0; l < lanes; ++l) {
    if (((mask >> l) & 1u) == 0) continue;
    const ThreadRec& r = threads_[base + l];
    if (r.status == Status::exited) continue;
    if (r.status != Status::at_warp || r.mask != mask) return;  // not there yet (or waiting elsewhere)
    group |= 1u << l;
  }
  for (unsigned l = 0; l < lanes; ++l) {
    if (((group >> l) & 1u) == 0) continue;
    if (threads_[base + l].op != op)
      fail(Failure::warp_mismatch, [&] {
        return block_name() + ": the lanes of mask " + hex(mask) + " of warp " + std::to_string(arriving.state.warp) +
               " meet at different warp collectives: " + describe_waits();
      });
  }
  std::uint64_t ballot = 0;
  std::uint32_t sum = 0, umin = ~0u, umax = 0, band = ~0u, bor = 0, bxor = 0;
  std::int32_t smin = INT32_MAX, smax = INT32_MIN;
  for (unsigned l = 0; l < lanes; ++l) {
    if (((group >> l) & 1u) == 0) continue;
    const std::uint64_t v = threads_[base + l].value;
    const auto v32 = static_cast<std::uint32_t>(v);
    if (v != 0) ballot |= std::uint64_t{1} << l;
    sum += v32;
    umin = std::min(umin, v32);
    umax = std::max(umax, v32);
    smin = std::min(smin, static_cast<std::int32_t>(v32));
    smax = std::max(smax, static_cast<std::int32_t>(v32));
    band &= v32;
    bor |= v32;
    bxor ^= v32;
  }
  bool all_equal = true;
  for (unsigned l = 0; l < lanes; ++l)
    if (((group >> l) & 1u) != 0 && threads_[base + l].value != arriving.value) all_equal = false;
  for (unsigned l = 0; l < lanes; ++l) {
    if (((group >> l) & 1u) == 0) continue;
    ThreadRec& r = threads_[base + l];
    std::uint64_t result = 0;
    switch (static_cast<abi::WarpOp>(op)) {
      case abi::WarpOp::sync: break;
      case abi::WarpOp::shfl_idx:
      case abi::WarpOp::shfl_up:
      case abi::WarpOp::shfl_down:
      case abi::WarpOp::shfl_xor:
        if (r.source >= abi::k_warp_size || ((group >> r.source) & 1u) == 0) {
          const bool exists = r.source < lanes;
          const bool in_mask = r.source < abi::k_warp_size && ((mask >> r.source) & 1u) != 0;
          fail(Failure::invalid_shuffle, [&] {
            return block_name() + ": " + thread_name(r) + " (lane " + std::to_string(l) + ") reads lane " +
                   std::to_string(r.source) + " in " + warp_name(op) + " (" + location(r.where) + "), which " +
                   (!exists    ? "does not exist (the block's last warp is partial)"
                    : !in_mask ? "is outside the mask " + hex(mask)
                               : "has exited") +
                   ": the device gives an undefined value";
          });
        }
        result = threads_[base + r.source].value;
        break;
      case abi::WarpOp::ballot: result = ballot; break;
      case abi::WarpOp::any: result = ballot != 0 ? 1 : 0; break;
      case abi::WarpOp::all: result = ballot == group ? 1 : 0; break;
      case abi::WarpOp::match_any:
        for (unsigned m = 0; m < lanes; ++m)
          if (((group >> m) & 1u) != 0 && threads_[base + m].value == r.value) result |= std::uint64_t{1} << m;
        break;
      case abi::WarpOp::match_all: result = all_equal ? group : 0; break;
      case abi::WarpOp::reduce_add: result = sum; break;
      case abi::WarpOp::reduce_min_unsigned: result = umin; break;
      case abi::WarpOp::reduce_max_unsigned: result = umax; break;
      case abi::WarpOp::reduce_min_signed: result = static_cast<std::uint32_t>(smin); break;
      case abi::WarpOp::reduce_max_signed: result = static_cast<std::uint32_t>(smax); break;
      case abi::WarpOp::reduce_and: result = band; break;
      case abi::WarpOp::reduce_or: result = bor; break;
      case abi::WarpOp::reduce_xor: result = bxor; break;
    }
    r.result = result;
  }
  for (unsigned l = 0; l < lanes; ++l)
    if (((group >> l) & 1u) != 0) make_ready(threads_[base + l], threads_[base + l].result);
}

unsigned BlockRunner::active_mask(ThreadRec& t, const abi::Where& where) {
  RuntimeSection section(in_kernel_);
  check_stop();
  t.status = Status::at_warp;
  at_warp_[t.state.warp] |= 1u << t.state.lane;
  t.op = k_active_mask_op;
  t.mask = 0;
  t.where = where;
  at_active_mask_[t.state.warp] |= 1u << t.state.lane;
  try_complete_active_mask(t.state.warp);
  suspend(t);
  return static_cast<unsigned>(t.result);
}

void BlockRunner::try_complete_active_mask(unsigned warp) {
  if (at_active_mask_[warp] == 0) return;
  const unsigned base = warp * abi::k_warp_size;
  const unsigned lanes = std::min(abi::k_warp_size, shape_.threads - base);
  for (unsigned l = 0; l < lanes; ++l) {
    const Status st = threads_[base + l].status;
    if (st != Status::exited && st != Status::at_warp && st != Status::at_barrier) return;  // it may still come
  }
  // Every lane has exited or waits: those in __activemask meet, one mask per call site.
  unsigned left = at_active_mask_[warp];
  while (left != 0) {
    const ThreadRec& first = threads_[base + static_cast<unsigned>(std::countr_zero(left))];
    unsigned group = 0;
    for (unsigned rest = left; rest != 0; rest &= rest - 1) {
      const unsigned l = static_cast<unsigned>(std::countr_zero(rest));
      if (same_place(threads_[base + l].where, first.where)) group |= 1u << l;
    }
    for (unsigned rest = group; rest != 0; rest &= rest - 1)
      make_ready(threads_[base + static_cast<unsigned>(std::countr_zero(rest))], group);
    left &= ~group;
  }
  at_active_mask_[warp] = 0;
}

void BlockRunner::trap(ThreadRec& t, const char* what, const abi::Where& where) {
  in_kernel_ = 0;
  fail(Failure::trap, [&] {
    return block_name() + ": " + thread_name(t) + " stopped the kernel: " + what + " (" + location(where) + " in " +
           (where.function != nullptr ? where.function : "?") + ")";
  });
}

namespace {

ThreadRec& record_of(const abi::ThreadState* s) {
  return *reinterpret_cast<ThreadRec*>(const_cast<abi::ThreadState*>(s));
}

int hook_barrier(const abi::ThreadState* s, abi::BarrierOp op, int predicate, const abi::Where* where) {
  ThreadRec& t = record_of(s);
  return t.runner->barrier(t, op, predicate, *where);
}

std::uint64_t hook_warp(const abi::ThreadState* s, abi::WarpOp op, unsigned mask, std::uint64_t value, unsigned source,
                        const abi::Where* where) {
  ThreadRec& t = record_of(s);
  return t.runner->warp(t, op, mask, value, source, *where);
}

unsigned hook_active_mask(const abi::ThreadState* s, const abi::Where* where) {
  ThreadRec& t = record_of(s);
  return t.runner->active_mask(t, *where);
}

void hook_trap(const abi::ThreadState* s, const char* what, const abi::Where* where) {
  ThreadRec& t = record_of(s);
  t.runner->trap(t, what, *where);
}

std::uint64_t hook_clock(const abi::ThreadState*) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

constexpr abi::Hooks k_hooks{abi::k_version,    sizeof(abi::Hooks), &hook_barrier, &hook_warp,
                             &hook_active_mask, &hook_trap,         &hook_clock};

}  // namespace

const abi::Hooks& runtime_hooks() noexcept { return k_hooks; }

}  // namespace leap::cpu_runtime::detail

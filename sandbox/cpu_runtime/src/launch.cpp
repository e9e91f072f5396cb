// SPDX-License-Identifier: Apache-2.0
// The grid: blocks in the schedule's order, on one or more workers (OS threads), each with its own
// stacks, shared-memory arena and block runner; the first failure stops them all.
#include <algorithm>
#include <atomic>
#include <bit>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "block_runner.hpp"
#include "fault_escape.hpp"
#include "leap/cpu_runtime/launch.hpp"
#include "leap/cpu_runtime/module.hpp"
#include "leap/detail/mix64.hpp"
#include "memory_map.hpp"

namespace leap::cpu_runtime {
namespace {

using ::leap::detail::mix64;

// A permutation of [0, n), keyed by `key`: a four-round Feistel network on the smallest even number of
// bits that holds n, walking the cycle until the value falls below n.
class BlockPermutation {
 public:
  BlockPermutation(std::uint64_t n, std::uint64_t key) : n_(n), key_(key) {
    int bits = n <= 1 ? 2 : static_cast<int>(std::bit_width(n - 1));
    bits += bits % 2;
    half_ = bits / 2;
  }
  std::uint64_t operator()(std::uint64_t i) const {
    std::uint64_t v = i;
    do v = encrypt(v);
    while (v >= n_);
    return v;
  }

 private:
  std::uint64_t encrypt(std::uint64_t v) const {
    const std::uint64_t mask = (std::uint64_t{1} << half_) - 1;
    std::uint64_t left = v >> half_, right = v & mask;
    for (std::uint64_t round = 0; round < 4; ++round) {
      const std::uint64_t next = left ^ (mix64(right ^ mix64(key_ + round)) & mask);
      left = right;
      right = next;
    }
    return (left << half_) | right;
  }
  std::uint64_t n_, key_;
  int half_ = 1;
};

void check_dims(const char* what, Dim3 d, const unsigned (&limits)[3]) {
  const unsigned v[3] = {d.x, d.y, d.z};
  const char axis[3] = {'x', 'y', 'z'};
  for (int i = 0; i < 3; ++i) {
    if (v[i] == 0 || v[i] > limits[i])
      throw LaunchError(std::string(what) + "." + axis[i] + " = " + std::to_string(v[i]) + ": must be 1.." +
                        std::to_string(limits[i]) + ", as on every GPU");
  }
}

unsigned char poison_byte(const Schedule& s) {
  switch (s.order()) {
    case Schedule::Order::in_order: return 0xFF;  // float NaN, int -1
    case Schedule::Order::reversed: return 0x7F;  // float 3.4e38, int 2139062143
    case Schedule::Order::random: break;
  }
  return static_cast<unsigned char>(mix64(s.seed() ^ 0x5EED) | 1u);
}

}  // namespace

std::vector<Schedule> Schedule::standard(std::uint64_t seed, int randoms) {
  std::vector<Schedule> s{in_order(), reversed()};
  for (int i = 0; i < randoms; ++i) s.push_back(random(seed + static_cast<std::uint64_t>(i)));
  return s;
}

std::string Schedule::name() const {
  switch (order_) {
    case Order::in_order: return "in_order";
    case Order::reversed: return "reversed";
    case Order::random: break;
  }
  return "random(" + std::to_string(seed_) + ")";
}

std::string_view to_string(ParamKind kind) noexcept {
  switch (kind) {
    case ParamKind::pointer: return "pointer";
    case ParamKind::integer: return "integer";
    case ParamKind::floating: return "floating";
    case ParamKind::other: break;
  }
  return "other";
}

std::string_view to_string(Failure failure) noexcept {
  switch (failure) {
    case Failure::none: return "none";
    case Failure::deadlock: return "deadlock";
    case Failure::divergent_barrier: return "divergent_barrier";
    case Failure::barrier_after_exit: return "barrier_after_exit";
    case Failure::warp_mismatch: return "warp_mismatch";
    case Failure::invalid_shuffle: return "invalid_shuffle";
    case Failure::trap: return "trap";
    case Failure::shared_out_of_range: return "shared_out_of_range";
    case Failure::stack_overflow: return "stack_overflow";
    case Failure::time_limit: return "time_limit";
  }
  return "?";
}

LaunchResult launch(const Kernel& kernel, Dim3 grid, Dim3 block, std::size_t dynamic_shared_bytes,
                    std::span<const Argument> args, const Schedule& schedule, const LaunchOptions& options) {
  const auto params = kernel.params();
  if (args.size() != params.size())
    throw LaunchError("kernel " + kernel.signature() + " takes " + std::to_string(params.size()) +
                      " arguments, the launch gives " + std::to_string(args.size()));
  std::vector<void*> pointers(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ParamInfo& p = params[i];
    const Argument& a = args[i];
    const bool kind_ok = a.kind == p.kind || a.kind == ParamKind::other || p.kind == ParamKind::other;
    if (a.size != p.size || !kind_ok)
      throw LaunchError("kernel " + kernel.signature() + ": argument " + std::to_string(i) + " is " +
                        std::string(to_string(a.kind)) + " of " + std::to_string(a.size) + " bytes, the parameter " +
                        std::string(to_string(p.kind)) + " of " + std::to_string(p.size));
    pointers[i] = const_cast<void*>(a.data);
  }
  return launch(kernel, grid, block, dynamic_shared_bytes, std::span<void* const>(pointers), schedule, options);
}

LaunchResult launch(const Kernel& kernel, Dim3 grid, Dim3 block, std::size_t dynamic_shared_bytes,
                    std::span<void* const> args, const Schedule& schedule, const LaunchOptions& options) {
  namespace d = detail;
  check_dims("grid", grid, k_max_grid);
  check_dims("block", block, k_max_block);
  const std::uint64_t threads = std::uint64_t{block.x} * block.y * block.z;
  if (threads > k_max_block_threads)
    throw LaunchError("block " + std::to_string(block.x) + "x" + std::to_string(block.y) + "x" +
                      std::to_string(block.z) + " = " + std::to_string(threads) + " threads: at most " +
                      std::to_string(k_max_block_threads) + " per block");
  if (dynamic_shared_bytes > k_max_dynamic_shared_bytes)
    throw LaunchError("dynamic_shared_bytes = " + std::to_string(dynamic_shared_bytes) + ": at most " +
                      std::to_string(k_max_dynamic_shared_bytes) + " (227 KiB, the largest opt-in of current GPUs)");
  if (args.size() != kernel.params().size())
    throw LaunchError("kernel " + kernel.signature() + " takes " + std::to_string(kernel.params().size()) +
                      " arguments, the launch gives " + std::to_string(args.size()));
  if (options.stack_bytes < 16 * 1024)
    throw LaunchError("LaunchOptions::stack_bytes = " + std::to_string(options.stack_bytes) + ": at least 16384");

  const auto* entry = static_cast<const d::abi::Kernel*>(kernel.entry_);
  const auto* table = static_cast<const d::abi::ModuleTable*>(kernel.table_);
  d::LaunchShape shape;
  shape.kernel = entry;
  shape.args = args.data();
  shape.grid = grid;
  shape.block = block;
  shape.threads = static_cast<unsigned>(threads);
  shape.order = schedule.order();
  shape.allow_exit_before_barrier = options.allow_exit_before_barrier;
  shape.allow_divergent_barriers = options.allow_divergent_barriers;

  const std::uint64_t blocks = std::uint64_t{grid.x} * grid.y * grid.z;
  unsigned workers = options.workers == 0 ? std::max(1u, std::thread::hardware_concurrency()) : options.workers;
  workers = static_cast<unsigned>(std::min<std::uint64_t>(workers, blocks));
  const std::optional<BlockPermutation> permutation =
      schedule.order() == Schedule::Order::random
          ? std::optional<BlockPermutation>(std::in_place, blocks, mix64(schedule.seed()))
          : std::nullopt;
  const unsigned char poison = poison_byte(schedule);
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (options.time_limit.count() > 0) deadline = std::chrono::steady_clock::now() + options.time_limit;

  std::atomic<std::uint64_t> next{0}, blocks_run{0}, switches{0}, stacks_most{0};
  std::atomic<bool> stop{false};
  std::mutex failure_mutex;
  std::optional<std::pair<std::uint64_t, d::BlockFailure>> first_failure;

  std::exception_ptr worker_error;

  auto blocks_of_one_worker = [&](d::StackPool& stacks, d::Arena& arena, d::BlockRunner& runner) {
    d::WorkerGuard guard(runner, stacks, arena, deadline);
    for (;;) {
      const std::uint64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= blocks || stop.load(std::memory_order_relaxed)) break;
      std::uint64_t linear = i;
      if (schedule.order() == Schedule::Order::reversed) linear = blocks - 1 - i;
      if (permutation) linear = (*permutation)(i);
      const d::abi::Index3 index{static_cast<unsigned>(linear % grid.x),
                                 static_cast<unsigned>((linear / grid.x) % grid.y),
                                 static_cast<unsigned>(linear / (std::uint64_t{grid.x} * grid.y))};
      const std::uint64_t used = __atomic_load_n(table->static_shared_used, __ATOMIC_ACQUIRE);
      arena.poison(used, poison);
      std::optional<d::BlockFailure> failure = runner.run(index, mix64(schedule.seed() ^ mix64(linear)));
      if (failure) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!first_failure || i < first_failure->first) first_failure.emplace(i, std::move(*failure));
        stop.store(true, std::memory_order_relaxed);
        break;
      }
      blocks_run.fetch_add(1, std::memory_order_relaxed);
    }
  };
  auto work = [&]() {
    try {
      d::StackPool stacks(options.stack_bytes);
      std::unique_ptr<d::Arena> arena = d::Arena::take(dynamic_shared_bytes);
      d::BlockRunner runner(shape, stacks, *arena, poison);
      blocks_of_one_worker(stacks, *arena, runner);
      d::Arena::give(std::move(arena));
      switches.fetch_add(runner.switches(), std::memory_order_relaxed);
      std::uint64_t most = stacks_most.load();
      while (most < stacks.allocated() && !stacks_most.compare_exchange_weak(most, stacks.allocated())) {}
    } catch (...) {  // no memory for stacks or an arena: the caller's exception
      std::lock_guard<std::mutex> lock(failure_mutex);
      if (!worker_error) worker_error = std::current_exception();
      stop.store(true, std::memory_order_relaxed);
    }
  };

  if (workers <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(workers - 1);
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
  }
  if (worker_error) std::rethrow_exception(worker_error);
  const LaunchStats stats{blocks_run.load(), switches.load(), stacks_most.load()};
  if (!first_failure) return LaunchResult{Failure::none, {}, stats};
  std::string message =
      "kernel " + kernel.name() + " under schedule " + schedule.name() + ": " + first_failure->second.message;
  if (first_failure->second.kind == Failure::time_limit)
    message += " (limit " + std::to_string(options.time_limit.count()) + " ms)";
  return LaunchResult{first_failure->second.kind, std::move(message), stats};
}

}  // namespace leap::cpu_runtime

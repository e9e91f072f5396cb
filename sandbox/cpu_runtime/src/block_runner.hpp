// SPDX-License-Identifier: Apache-2.0
// One block of a launch, run on the calling OS thread: its CUDA threads are fibers (Boost.Context's
// fcontext), switched only where a thread must wait for others.
//
// Lazy fibers. A runner is a fiber that runs not-yet-started threads one after another on its own
// stack: when a thread returns, the runner starts the next one with a plain call, so a block whose
// threads never wait runs on one stack without a single switch. When a thread waits (a barrier, a
// warp collective), the stack stays with it and the next thread to run is picked: a started one is
// resumed by a direct switch (thread to thread, never through a scheduler fiber), a new one gets a
// fresh runner. A runner whose thread exits while only started threads are ready hands its stack
// back as it switches away.
//
// The pick. The ready set holds the threads that may run: not yet started, or released from a
// barrier or warp collective. The schedule picks from it the lowest thread (in order), the highest
// (reversed) or a random one (seeded per block), so the order between barriers is the schedule's.
//
// Waiting. A barrier completes when every thread that has not exited waits at it; all must wait at
// one call site with one operation (else divergent_barrier). A warp collective completes when every
// lane of its mask that has not exited waits with the same mask; all must have the same operation
// (else warp_mismatch), and a shuffle must read a lane among them (else invalid_shuffle). When no
// thread may run and some have not exited, the block is deadlocked: the report lists where each
// thread waits. A failure ends the block at once: its fibers are abandoned, their stacks reused.
#pragma once

#include <boost/context/detail/fcontext.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "leap/cpu_runtime/launch.hpp"
#include "kernel_include/leap_cpu/abi.hpp"
#include "memory_map.hpp"
#include "sanitizer_fibers.hpp"

namespace leap::cpu_runtime::detail {

namespace fc = boost::context::detail;
namespace abi = leap_cpu::abi;

enum class Status : std::uint8_t { unstarted, ready, running, at_barrier, at_warp, exited };

class BlockRunner;

struct ThreadRec {
  abi::ThreadState state;  // first: the module hands back &state and the hooks find the record
  BlockRunner* runner = nullptr;
  fc::fcontext_t ctx = nullptr;  // where to resume it while it waits or is ready again
  Stack* stack = nullptr;        // the stack it runs on, from its start to its exit
  Status status = Status::unstarted;
  int op = 0;  // the BarrierOp or WarpOp it waits at
  unsigned mask = 0;
  std::uint64_t value = 0;
  unsigned source = 0;
  int predicate = 0;
  std::uint64_t result = 0;
  abi::Where where{};
};
static_assert(std::is_standard_layout_v<ThreadRec>, "the hooks turn a ThreadState pointer back into its record");

struct BlockFailure {
  Failure kind = Failure::none;
  std::string message;
};

// What every block of one launch shares.
struct LaunchShape {
  const abi::Kernel* kernel = nullptr;
  void* const* args = nullptr;
  Dim3 grid, block;
  unsigned threads = 0;  // per block
  Schedule::Order order = Schedule::Order::in_order;
  bool allow_exit_before_barrier = true;
  bool allow_divergent_barriers = false;
};

// A fault or a time limit noticed by a signal handler, kept in plain fields until the worker's own
// context turns it into a message.
struct PendingEscape {
  Failure kind = Failure::none;
  const void* address = nullptr;
};

class BlockRunner {
 public:
  // The threads' state that is the same in every block is set here, once per launch and worker.
  BlockRunner(const LaunchShape& shape, StackPool& stacks, const Arena& arena, unsigned char poison);
  BlockRunner(const BlockRunner&) = delete;
  BlockRunner& operator=(const BlockRunner&) = delete;

  // Runs one block to its end; the failure, if any.
  std::optional<BlockFailure> run(abi::Index3 block, std::uint64_t seed);

  // The hooks' work, on the calling CUDA thread's fiber.
  int barrier(ThreadRec& t, abi::BarrierOp op, int predicate, const abi::Where& where);
  std::uint64_t warp(ThreadRec& t, abi::WarpOp op, unsigned mask, std::uint64_t value, unsigned source,
                     const abi::Where& where);
  unsigned active_mask(ThreadRec& t, const abi::Where& where);
  [[noreturn]] void trap(ThreadRec& t, const char* what, const abi::Where& where);

  // For the signal handler: whether a CUDA thread's own code runs now (not the runtime's), and the
  // way out of it. escape() jumps to the worker's context; the block ends with `why`.
  bool in_kernel_code() const noexcept { return in_kernel_ != 0; }
  [[noreturn]] void escape(PendingEscape why) noexcept;
  // Set by the time limit's signal; checked wherever the runtime has control.
  void request_stop() noexcept { stop_requested_ = 1; }
  std::uint64_t switches() const noexcept { return switches_; }

 private:
  struct Handoff {
    ThreadRec* from = nullptr;  // whose context the receiver saves
    bool from_worker = false;   // the worker's own context
    Stack* release = nullptr;   // a stack the sender has left for good
  };

  static void runner_entry(fc::transfer_t from);
  [[noreturn]] void runner_loop(Stack* stack);
  void accept(fc::fcontext_t from) noexcept;
  void suspend(ThreadRec& t);
  [[noreturn]] void leave() noexcept;
  template <class Describe>  // Describe: () -> std::string
  [[noreturn]] void fail(Failure kind, Describe describe);
  void check_stop();
  ThreadRec* pick();
  void make_ready(ThreadRec& t, std::uint64_t result);
  void after_exit(ThreadRec& t);
  void release_barrier();
  void try_complete_warp(const ThreadRec& arriving);
  void try_complete_active_mask(unsigned warp);

  std::string block_name() const;
  std::string thread_name(const ThreadRec& t) const;
  std::string describe_waits() const;

  LaunchShape shape_;
  StackPool& stacks_;
  std::vector<ThreadRec> threads_;
  std::vector<std::uint64_t> ready_;  // bit i: thread i may run
  unsigned ready_count_ = 0;
  std::uint64_t rng_ = 0;
  unsigned live_ = 0, exited_ = 0;
  unsigned barrier_arrived_ = 0, barrier_true_ = 0;
  std::vector<unsigned> at_warp_;         // per warp: lanes waiting at a warp collective or __activemask
  std::vector<unsigned> at_active_mask_;  // per warp: lanes waiting in __activemask
  ThreadRec* current_ = nullptr;
  Stack* start_stack_ = nullptr;  // the stack a new runner starts on
  fc::fcontext_t worker_ctx_ = nullptr;
  FiberIdentity worker_identity_;  // the worker's own stack, for the sanitizers
  Handoff handoff_;
  std::optional<BlockFailure> failure_;
  PendingEscape escape_;
  volatile int in_kernel_ = 0;
  volatile int stop_requested_ = 0;
  abi::Index3 block_{};
  std::uint64_t switches_ = 0;
};

// The hooks every module is attached with.
const abi::Hooks& runtime_hooks() noexcept;

}  // namespace leap::cpu_runtime::detail

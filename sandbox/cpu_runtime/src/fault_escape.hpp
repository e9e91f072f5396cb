// SPDX-License-Identifier: Apache-2.0
// The ways out of a CUDA thread that will not come back by itself, on the OS thread of a worker:
//
//   a fault in a guard page   a stack overflow (the page below every fiber's stack), or a read or
//                             write past the dynamic shared memory (the page after it): SIGSEGV or
//                             SIGBUS, handled on an alternate signal stack
//   the time limit            a per-thread POSIX timer (CLOCK_MONOTONIC, SIGEV_THREAD_ID) sends
//                             SIGRTMIN+5 at the launch's deadline and every 20 ms after it
//
// The handler leaves the faulting or spinning thread's fiber for the worker's own context (the block
// ends with the failure; its fibers are abandoned) only while the CUDA thread's own code runs; inside
// the runtime the time limit is a flag the runtime checks at its next step, and a fault is not ours.
// A fault that is not in a guard page goes to the handler that was installed before (restored, so the
// fault repeats into it, or its default action). The handlers are installed at each launch if someone
// replaced them meanwhile (a test framework, say); a thread without an alternate signal stack gets one
// for the launch.
//
// Abandoning a thread in the middle of its code is safe for what kernels do (arithmetic on memory);
// one that was inside the C library (printf holding the stdout lock) may leave it held: after a time
// limit, run the next verification in a fresh process.
#pragma once

#include <chrono>
#include <optional>

#include "block_runner.hpp"
#include "memory_map.hpp"

namespace leap::cpu_runtime::detail {

// While it lives, the calling OS thread's faults and time limit end the block `runner` is running.
class WorkerGuard {
 public:
  WorkerGuard(BlockRunner& runner, const StackPool& stacks, const Arena& arena,
              std::optional<std::chrono::steady_clock::time_point> deadline);
  ~WorkerGuard();
  WorkerGuard(const WorkerGuard&) = delete;
  WorkerGuard& operator=(const WorkerGuard&) = delete;

 private:
  void* alt_stack_ = nullptr;  // ours to remove, when the thread had none
  void* timer_ = nullptr;
  bool has_timer_ = false;
};

}  // namespace leap::cpu_runtime::detail

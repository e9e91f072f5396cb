// SPDX-License-Identifier: Apache-2.0
// The GPU runner: a child process that owns the CUDA context, so a kernel that hangs, traps or
// corrupts memory costs one runner and never the harness. The parent never initialises CUDA.
// The runner is its own program, leap-sandbox-gpu-runner, started with posix_spawn (never a fork of a
// multithreaded parent that then loads the driver): own process group, default signal handlers, only
// its two pipes open, death with its parent, no core dumps, and once the driver is initialised a
// Landlock ruleset (device nodes and driver libraries only) and a seccomp filter.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "leap/sandbox/evaluator.hpp"  // GpuRunnerConfig

namespace leap::sandbox {

// Where leap-sandbox-gpu-runner is: $LEAP_SANDBOX_GPU_RUNNER, else beside the running program, else the
// install prefix's bin directory, else this build's. Empty when none exists.
std::string find_gpu_runner_executable();

enum class CallStatus {
  ok,       // the runner answered
  timeout,  // the runner outlived the limit and was killed; the next call starts a fresh one
  died,     // the runner exited or was killed by a signal before answering
  failed,   // the runner could not be started or spoke garbage
};
std::string_view to_string(CallStatus status) noexcept;

struct CallResult {
  CallStatus status = CallStatus::failed;
  std::string reply;       // the runner's answer (CBOR), when ok
  std::string last_stage;  // the last stage the runner announced, e.g. "candidate" (what was running when it hung)
  std::string detail;      // for died/failed: the exit status or signal, in words
  double seconds = 0.0;
};

// One runner process at a time, started on first use and after a timeout, death or an answer that
// asks for a restart. Not thread-safe: callers serialise (the Evaluator holds a lock).
class GpuRunner {
 public:
  explicit GpuRunner(GpuRunnerConfig config = {});
  ~GpuRunner();  // kills the runner
  GpuRunner(const GpuRunner&) = delete;
  GpuRunner& operator=(const GpuRunner&) = delete;

  // Sends one request (CBOR bytes) and waits for the answer. `limit` runs from the end of the
  // runner's initialisation (its "ready" stage), so a cold start does not eat into a kernel's time.
  CallResult call(std::string_view request, std::chrono::milliseconds limit);
  void restart_next();  // the next call starts a fresh runner (after a sticky CUDA error)
  void stop();          // kills the runner now, if any
  bool running() const noexcept;
  int pid() const noexcept;      // 0 when none
  int started() const noexcept;  // how many runners this object has started

 private:
  GpuRunnerConfig config_;
  int pid_ = 0;
  int to_runner_ = -1;
  int from_runner_ = -1;
  int started_ = 0;
  bool restart_ = false;
  bool start(std::string& error);
};

// The descriptors leap-sandbox-gpu-runner reads requests from and writes replies to.
inline constexpr int k_runner_request_fd = 3;
inline constexpr int k_runner_reply_fd = 4;

// The runner's main loop: reads requests from `in_fd`, answers on `out_fd`, until EOF or "exit".
// Called by leap-sandbox-gpu-runner; returns the process exit code. Operations: ping, probe (the GPU, as
// probe_gpu reports it, and the confinement in force), eval, exit, and the test operations.
int run_gpu_runner(int in_fd, int out_fd, const GpuRunnerConfig& config);

}  // namespace leap::sandbox

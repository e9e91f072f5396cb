// SPDX-License-Identifier: Apache-2.0
// The evaluation worker: a child process that owns the CUDA context, so a kernel that hangs, traps or
// corrupts memory costs one worker and never the harness. The parent never initialises CUDA.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace leap::sandbox {

struct WorkerConfig {
  std::string driver_library = "libcuda.so.1";  // dlopen'ed by the worker, never by the parent
  int device = 0;
  // A worker with no CUDA at all that answers only the test operations (ping, sleep, crash, exit),
  // for testing the protocol, the watchdog and kill-and-replace without a GPU.
  bool fake = false;
  std::chrono::milliseconds init_timeout{60000};  // driver, context and CUPTI set-up of a fresh worker
};

enum class CallStatus {
  ok,       // the worker answered
  timeout,  // the worker outlived the limit and was killed; the next call starts a fresh one
  died,     // the worker exited or was killed by a signal before answering
  failed,   // the worker could not be started or spoke garbage
};
std::string_view to_string(CallStatus status) noexcept;

struct CallResult {
  CallStatus status = CallStatus::failed;
  std::string reply;        // the worker's answer (CBOR), when ok
  std::string last_stage;   // the last stage the worker announced, e.g. "candidate" (what was running when it hung)
  std::string detail;       // for died/failed: the exit status or signal, in words
  double seconds = 0.0;
};

// One worker process at a time, started on first use and after a timeout, death or an answer that
// asks for a restart. Not thread-safe: callers serialise (the Evaluator holds a lock).
class WorkerProcess {
 public:
  explicit WorkerProcess(WorkerConfig config = {});
  ~WorkerProcess();  // kills the worker
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends one request (CBOR bytes) and waits for the answer. `limit` runs from the end of the
  // worker's initialisation (its "ready" stage), so a cold start does not eat into a kernel's time.
  CallResult call(std::string_view request, std::chrono::milliseconds limit);
  void restart_next();  // the next call starts a fresh worker (after a sticky CUDA error)
  void stop();          // kills the worker now, if any
  bool running() const noexcept;
  int pid() const noexcept;     // 0 when none
  int started() const noexcept;  // how many workers this object has started

 private:
  WorkerConfig config_;
  int pid_ = 0;
  int to_worker_ = -1;
  int from_worker_ = -1;
  int started_ = 0;
  bool restart_ = false;
  bool start(std::string& error);
};

// The worker's main loop: reads requests from `in_fd`, answers on `out_fd`, until EOF or "exit".
// Called in the forked child; returns the process exit code.
int run_worker(int in_fd, int out_fd, const WorkerConfig& config);

}  // namespace leap::sandbox

// SPDX-License-Identifier: Apache-2.0
// A candidate against a task: compile (through the compile service), then run, check and time it in the
// GPU runner process, and turn all of that into a verdict, a speedup and feedback for the next turn.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <leap/verdict.hpp>

#include "leap/sandbox/compile_result.hpp"
#include "leap/sandbox/compiler.hpp"
#include "leap/sandbox/driver_probe.hpp"
#include "leap/sandbox/launch_plan.hpp"
#include "leap/sandbox/task.hpp"
#include "leap/sandbox/timing_evidence.hpp"

namespace leap::sandbox {

enum class EvalStatus {
  verdict,  // a verdict was reached (compile_error is one, with or without a GPU)
  no_gpu,   // the candidate compiled, but there is no GPU to run it: no verdict, never a made-up one
  error,    // the harness failed (reference broken, GPU runner would not start, ...); no verdict
};
std::string_view to_string(EvalStatus status) noexcept;

struct KernelTiming {
  static constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  std::string method;      // "cupti" (every kernel on every stream in the window) or "events" (fallback)
  double median_ms = nan;  // by `method`
  double p25_ms = nan;
  double p75_ms = nan;
  double min_ms = nan;
  double spread = nan;  // (p75 - p25) / median
  int runs = 0;
  double events_median_ms = nan;  // CUDA events around the launch, for comparison
  double wall_median_ms = nan;    // host wall clock around launch + synchronize
};

// Whose launch plan runs the candidate.
enum class PlanSource {
  task,       // the candidate declared none: the task's own launch
  candidate,  // declared in the candidate's source (launch_plan.hpp)
};
std::string_view to_string(PlanSource source) noexcept;  // "task" or "candidate", as to_json writes it

// How the candidate is (or would be) launched: the plan it declared (launch_plan.hpp) or the task's.
struct LaunchPlanReport {
  PlanSource source = PlanSource::task;
  PlanStatus status = PlanStatus::ok;    // invalid or refused: the verdict is compile_error, nothing was launched
  std::string error;                     // what is wrong and what to change
  LaunchPlan plan;                       // as declared, or the task's own
  std::optional<ResolvedPlan> resolved;  // at the task's timing sizes, when ok
  Sizes sizes;                           // those sizes
};

// Why a result's speedup is unknown. A correct kernel is timed within its task's time limit, or its
// unknown speedup ranks below every measured one (leap::KernelOrder, leap.verl's score): a kernel
// never gains by leaving its speed unmeasured, and the reason says which case it was.
enum class SpeedupUnknown {
  none,           // the speedup is known: measured and credited
  not_correct,    // no correct verdict (or no verdict): only a correct kernel is timed
  not_requested,  // timing was turned off (EvaluatorConfig::time, `eval --no-time`)
  no_room,        // the correctness trials left too little of the task's time limit to time it
  below_floor,    // its fastest timed run beat the physical floor (EvalResult::below_floor): not credited
  not_measured,   // timed, but the timer gave no usable median for it or the reference
};
std::string_view to_string(SpeedupUnknown reason) noexcept;  // "none", "not_correct", ... as to_json writes it

struct EvalResult {
  EvalStatus status = EvalStatus::error;
  std::optional<Verdict> verdict;                             // set iff status == verdict
  double speedup = std::numeric_limits<double>::quiet_NaN();  // reference median / candidate median; correct only
  // Why speedup is unknown (none exactly when it is known), and the same in a sentence.
  SpeedupUnknown speedup_unknown = SpeedupUnknown::not_correct;
  std::string speedup_unknown_detail = "only a correct kernel is timed";
  KernelTiming candidate, reference;
  CompileResult compile;                        // the candidate's compile
  std::optional<LaunchPlanReport> launch_plan;  // once the candidate compiled
  std::string cuda_error;                       // runtime_error: the CUDA error's name, e.g. CUDA_ERROR_ILLEGAL_ADDRESS
  std::string detail;                           // what happened, in one or two lines (mismatch summary, error, stage)
  std::string feedback;                         // short text for the policy's next turn
  std::string error;                            // status error: what failed in the harness
  std::string timing_note;                      // why CUPTI was not used, when it was not
  TimingEvidence timing_evidence;               // how the timed runs were measured (set when timed)
  // Non-empty when the candidate's fastest timed run beat the physical floor (reading its inputs once
  // at the device's peak bandwidth): the figures, and the speedup is left unknown (not paid).
  std::string below_floor;
  std::string device;
  int trials = 0;          // correctness trials that ran to the end
  std::uint64_t seed = 0;  // base seed of the trials (reproduce with EvaluatorConfig::seed)
  double seconds = 0.0;
};

// The GPU runner: its own program, leap-sandbox-gpu-runner, that owns the CUDA context, so a kernel
// that hangs, traps or corrupts memory costs one runner process and never the harness.
struct GpuRunnerConfig {
  std::string driver_library = "libcuda.so.1";  // dlopen'ed by the runner, never by the parent
  int device = 0;
  // A runner with no CUDA at all that answers only the test operations (ping, sleep, crash, exit),
  // for testing the protocol, the watchdog and kill-and-replace without a GPU.
  bool fake = false;
  std::chrono::milliseconds init_timeout{60000};  // driver, context and CUPTI set-up of a fresh runner
  // The leap-sandbox-gpu-runner program; empty = $LEAP_SANDBOX_GPU_RUNNER, else beside the running program,
  // else the install prefix's bin directory, else this build's.
  std::string executable;
  // Landlock and seccomp once the driver is initialised (or at start, for a fake runner). Off only for
  // diagnosing a driver that needs more than the ruleset allows.
  bool confine = true;
  // Where the device reports CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, kernels can read and write
  // the runner's ordinary host memory (its stack, the host copies of inputs and outputs): the runner
  // refuses to evaluate there unless this is set by an operator who accepts that.
  bool allow_pageable_host_access = false;
  // The driver grows a context's local memory to fit the largest kernel run so far and never
  // shrinks it: after a candidate kernel with more local memory per thread than this, the runner is
  // replaced before the next evaluation.
  std::size_t local_memory_restart_bytes = std::size_t{64} << 10;
};
// The 0.1 name, when "worker" also meant the pooled compiler and the fleet member. Removed in 0.3.
using WorkerConfig [[deprecated("use leap::sandbox::GpuRunnerConfig")]] = GpuRunnerConfig;

class GpuRunner;  // the parent's end of the runner (internal)

struct EvaluatorConfig {
  CompilerConfig compiler;  // include jail, isolation, cache
  GpuRunnerConfig gpu_runner;
  std::string arch;                   // empty: the GPU's own sm_XY, or sm_90 without a GPU
  std::optional<std::uint64_t> seed;  // base seed; empty = a fresh random seed per evaluation
  bool time = true;                   // time correct candidates (false: verdict only, much faster)
  std::optional<GpuStatus> gpu;       // skip the driver probe and use this (tests; a scheduler that knows)
  // The CPU limit of each compile; a task whose compile_cpu_seconds is higher raises it for its own
  // candidates and reference (task_library.hpp).
  std::chrono::milliseconds compile_timeout{10000};
};

class Evaluator {
 public:
  explicit Evaluator(EvaluatorConfig config = {});  // probes the GPU (in a forked child) unless given
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Thread-safe: compiles run in parallel, kernels one at a time in the GPU runner. Throws only for
  // misuse (an invalid task); everything the candidate does is in the result.
  EvalResult evaluate(const TaskSpec& task, std::string_view candidate_source);
  // With headers the candidate includes, shipped under the same rules as a task's (CompileJob::headers).
  EvalResult evaluate(const TaskSpec& task, std::string_view candidate_source, const std::vector<Header>& headers);
  CompileResult compile(std::string_view source);  // with the evaluator's arch and options

  const GpuStatus& gpu() const noexcept;
  const std::string& arch() const noexcept;
  Compiler& compiler() noexcept;
  GpuRunner& gpu_runner() noexcept;  // for tests and diagnostics; lock-free access is the caller's problem

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The result as one JSON object: verdict (null unless reached), status, speedup (null unless known),
// speedup_unknown {reason, detail} (null when the speedup is known),
// timings {candidate, reference, note, method, stopping_rule_source, reps, checked_runs,
// matched_by_id, matched_by_window, dropped_records, warmup {candidate {launches, gpu_ms}, reference,
// min_gpu_ms}, floor {bytes, peak_bytes_per_s, headroom, floor_ms} | null, stopped_early} (null when
// nothing was timed), compile {status, log, seconds, cache_hit}, launch_plan {source, status, error, directives,
// sizes, kernels [{kernel, grid, block, shared_bytes, args}], scratch [{name, dtype, count, bytes}]}
// (null unless the candidate compiled), cuda_error, detail, feedback, error, seed, below_floor (text
// or null), ...
std::string to_json(const EvalResult& result);

// The first `max_lines` diagnostic lines ("error"/"warning" lines and their context) of a compile log.
std::string first_errors(std::string_view log, int max_lines = 12);

}  // namespace leap::sandbox

// SPDX-License-Identifier: Apache-2.0
// The GPU runner's answer to an evaluation request, and its JSON form (sent as CBOR in a reply frame,
// frames.hpp): what the harness found, what the runner's rules add, and what the evaluator reads back
// into an EvalResult (runner_reply.hpp). The one place its keys are spelled. Internal.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include <leap/verdict.hpp>

namespace leap::sandbox::detail {

// How a side's timed runs were measured: CUPTI's records of every kernel in the run's window, or
// CUDA events around the launches where CUPTI is off or missed a run.
enum class TimingMethod { cupti, events };
std::string_view to_string(TimingMethod method) noexcept;  // "cupti" or "events"

// One side's timed runs, summarised (timing_statistics.hpp); NaN where there were none.
struct SideTiming {
  double median_ms = NAN, p25_ms = NAN, p75_ms = NAN, min_ms = NAN, spread = NAN;  // by the method
  std::size_t runs = 0;
  double events_median_ms = NAN;          // CUDA events around the launches, for comparison
  double wall_median_ms = NAN;            // host wall clock around launch and synchronize
  std::optional<double> cupti_median_ms;  // when CUPTI timed the runs
};

struct WarmUpReport {
  int launches = 0;
  double gpu_ms = 0.0;
};

// The physical floor under the candidate's fastest run (timing_floor.hpp).
struct FloorReport {
  std::uint64_t bytes = 0;
  double peak_bytes_per_s = 0.0;
  double headroom = 0.0;
  double floor_ms = 0.0;
};

struct TimingReport {
  // Set: the kernel was not timed because the correctness trials left no room in the task's time
  // limit (the evaluator's SpeedupUnknown::no_room), in words; nothing below is sent.
  std::optional<std::string> skipped;
  TimingMethod method = TimingMethod::events;
  // What the stopping rule read: CUPTI's durations where CUPTI timed every run so far, else events.
  TimingMethod stopping_rule_source = TimingMethod::events;
  std::size_t dropped_records = 0;  // CUPTI records the driver dropped
  int reps = 0;                     // run pairs timed
  int checked_runs = 0;             // run pairs whose outputs were compared on the device (all of them)
  // Timed runs (the candidate's and the reference's) whose CUPTI records were found by external id,
  // or by time window where the records carried none.
  std::size_t matched_by_id = 0, matched_by_window = 0;
  std::string note;  // why CUPTI was not used, records dropped, runs stopped early
  SideTiming candidate, reference;
  WarmUpReport warmup_candidate, warmup_reference;
  double warmup_min_gpu_ms = 0.0;
  std::optional<FloorReport> floor;
  std::string below_floor;    // non-empty: the fastest run beat the floor; the timing is not paid
  std::string stopped_early;  // non-empty: fewer runs than the task's minimum, and why
};

// The first difference of a wrong answer in the correctness trials.
struct Mismatch {
  std::size_t first_index = 0;
  double expected = 0.0;
  double actual = 0.0;  // NaN is sent as the text "nan"
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;
};

struct EvaluationReply {
  bool ok = false;  // false: the harness (or the runner) failed; `error` says how; no verdict
  std::string error;
  std::optional<Verdict> verdict;  // correct, wrong_answer, runtime_error, or compile_error for a plan refusal
  // The plan broke a rule, checked again in the runner with the device's limits (with compile_error).
  std::optional<std::string> plan_error;
  std::string cuda_error;   // runtime_error: the CUDA error's name
  std::string detail;       // what happened, in a line or two
  bool when_timed = false;  // wrong_answer: a timed run, not a correctness trial, was wrong (always sent with it)
  int timed_run = 0;        // which timed run (1-based); 0: none
  std::optional<Mismatch> mismatch;
  int trials = 0;  // correctness trials run
  std::string device;
  bool restart = false;  // the runner exits after this reply: its context or memory is suspect
  std::string restart_reason;
  std::size_t local_bytes_per_thread = 0;  // the most local memory of a candidate kernel
  std::optional<TimingReport> timing;
};

nlohmann::json to_json(const EvaluationReply& reply);

// The reply back. A key that is missing takes the default above; one of the wrong type throws
// nlohmann's exception (the evaluator reports a malformed reply).
EvaluationReply evaluation_reply_from_json(const nlohmann::json& reply);

}  // namespace leap::sandbox::detail

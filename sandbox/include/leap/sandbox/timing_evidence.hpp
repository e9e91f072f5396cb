// SPDX-License-Identifier: Apache-2.0
// How a result's timed runs were measured, so a reader can tell whether to trust its speedup: which
// timer, how the CUPTI records were tied to the runs, what was lost, how many runs were checked, the
// warm-up each kernel got and the physical floor under the candidate. EvalResult::timing_evidence;
// in the JSON, the `timings` object (to_json in evaluator.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace leap::sandbox {

// One kernel's warm-up: launches back to back until a minimum of GPU time (or a wall-clock cap).
struct WarmUpEvidence {
  int launches = 0;
  double gpu_ms = 0.0;
};

// The physical floor under the candidate's fastest run: its inputs read once at the device's peak.
struct FloorEvidence {
  std::uint64_t bytes = 0;        // bytes the task's inputs hold (those not drawn as zeros)
  double peak_bytes_per_s = 0.0;  // the device's peak memory bandwidth
  double headroom = 0.0;          // the floor is bytes / peak / headroom
  double floor_ms = 0.0;
};

struct TimingEvidence {
  std::string method;  // "cupti" or "events": the timer every run was measured by
  // What the stopping rule read ("cupti" or "events"): CUPTI's durations where it timed every run so
  // far, so host launch jitter in the events does not keep a short kernel running to max_reps.
  std::string stopping_rule_source;
  int reps = 0;          // run pairs timed
  int checked_runs = 0;  // run pairs whose outputs were compared on the device (all of them)
  // Timed runs (candidate's and reference's) whose CUPTI records were found by external correlation
  // id, or by time window where the records carried none; both 0 when events timed the runs.
  std::size_t matched_by_id = 0, matched_by_window = 0;
  std::size_t dropped_records = 0;  // CUPTI records the driver reported lost
  WarmUpEvidence warmup_candidate, warmup_reference;
  double warmup_min_gpu_ms = 0.0;      // the GPU time a warm-up aims at
  std::optional<FloorEvidence> floor;  // absent where the device does not report its bandwidth
  std::string stopped_early;           // non-empty: fewer runs than the task's minimum, and why
};

}  // namespace leap::sandbox

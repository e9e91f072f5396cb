// SPDX-License-Identifier: Apache-2.0
#include "evaluation/runner_reply.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

namespace leap::sandbox::detail {
namespace {

std::string fmt(double v, int precision = 4) {
  std::ostringstream os;
  os.precision(precision);
  os << v;
  return os.str();
}

KernelTiming timing_from(const SideTiming& k, TimingMethod method) {
  KernelTiming t;
  t.method = std::string(to_string(method));
  t.median_ms = k.median_ms;
  t.p25_ms = k.p25_ms;
  t.p75_ms = k.p75_ms;
  t.min_ms = k.min_ms;
  t.spread = k.spread;
  t.runs = static_cast<int>(k.runs);
  t.events_median_ms = k.events_median_ms;
  t.wall_median_ms = k.wall_median_ms;
  return t;
}

TimingEvidence evidence_from(const TimingReport& t) {
  TimingEvidence e;
  e.method = std::string(to_string(t.method));
  e.stopping_rule_source = std::string(to_string(t.stopping_rule_source));
  e.reps = t.reps;
  e.checked_runs = t.checked_runs;
  e.matched_by_id = t.matched_by_id;
  e.matched_by_window = t.matched_by_window;
  e.dropped_records = t.dropped_records;
  e.warmup_candidate = {t.warmup_candidate.launches, t.warmup_candidate.gpu_ms};
  e.warmup_reference = {t.warmup_reference.launches, t.warmup_reference.gpu_ms};
  e.warmup_min_gpu_ms = t.warmup_min_gpu_ms;
  if (t.floor) e.floor = FloorEvidence{t.floor->bytes, t.floor->peak_bytes_per_s, t.floor->headroom, t.floor->floor_ms};
  e.stopped_early = t.stopped_early;
  return e;
}

}  // namespace

void read_runner_reply(const EvaluationReply& reply, EvalResult& r) {
  auto verdict = [&](Verdict v) {
    r.status = EvalStatus::verdict;
    r.verdict = v;
  };
  r.device = reply.device;
  r.trials = reply.trials;
  if (!reply.ok) {
    r.status = EvalStatus::error;
    r.error = reply.error.empty() ? "the runner reported a failure" : reply.error;
    return;
  }
  r.detail = reply.detail;
  if (reply.verdict == Verdict::compile_error && reply.plan_error) {  // the plan broke a limit of this device
    verdict(Verdict::compile_error);
    const std::string& why = *reply.plan_error;
    if (r.launch_plan) {
      r.launch_plan->status = PlanStatus::invalid;
      r.launch_plan->error = why;
      r.launch_plan->resolved.reset();
    }
    r.feedback = "Launch plan error: " + why;
  } else if (reply.verdict == Verdict::runtime_error) {
    verdict(Verdict::runtime_error);
    r.cuda_error = reply.cuda_error;
    r.feedback = "Runtime error: " + r.detail;
  } else if (reply.verdict == Verdict::wrong_answer) {
    verdict(Verdict::wrong_answer);
    r.feedback = (reply.when_timed ? "Wrong answer when timed: " : "Wrong answer: ") + r.detail;
  } else if (reply.verdict == Verdict::correct) {
    verdict(Verdict::correct);
    // Each way out says why the speed is unknown, unless it is measured and credited.
    const auto unknown = [&](SpeedupUnknown reason, std::string why) {
      r.speedup_unknown = reason;
      r.speedup_unknown_detail = std::move(why);
    };
    if (!reply.timing) {
      unknown(SpeedupUnknown::not_requested, "timing was turned off for this evaluation");
      r.feedback = "Correct (not timed).";
      return;
    }
    const TimingReport& t = *reply.timing;
    if (t.skipped) {
      unknown(SpeedupUnknown::no_room, *t.skipped);
      r.timing_note = *t.skipped;
      r.feedback = "Correct (not timed: " + r.timing_note + ").";
      return;
    }
    r.candidate = timing_from(t.candidate, t.method);
    r.reference = timing_from(t.reference, t.method);
    r.timing_note = t.note;
    r.timing_evidence = evidence_from(t);
    r.below_floor = t.below_floor;
    if (!r.below_floor.empty()) {  // faster than physics allows: correct, but no speed is paid
      unknown(SpeedupUnknown::below_floor, r.below_floor);
      r.feedback = "Correct, but the timing is not credited: " + r.below_floor + ".";
      return;
    }
    const double speedup = r.reference.median_ms / r.candidate.median_ms;
    if (!(r.candidate.median_ms > 0 && r.reference.median_ms > 0 && std::isfinite(speedup))) {
      unknown(SpeedupUnknown::not_measured, "the timer gave no usable median (candidate " + fmt(r.candidate.median_ms) +
                                                " ms, reference " + fmt(r.reference.median_ms) + " ms, " +
                                                std::to_string(r.candidate.runs) + " runs)");
      r.feedback = "Correct (speed not measured: " + r.speedup_unknown_detail + ").";
      return;
    }
    r.speedup = speedup;
    unknown(SpeedupUnknown::none, "");
    r.feedback = "Correct. " + fmt(r.speedup, 3) + "x the reference's speed (candidate " + fmt(r.candidate.median_ms) +
                 " ms, spread " + fmt(100 * r.candidate.spread, 2) + "%; reference " + fmt(r.reference.median_ms) +
                 " ms; " + r.candidate.method + ", " + std::to_string(r.candidate.runs) + " runs each).";
  } else {
    r.status = EvalStatus::error;
    r.error = "the runner gave no verdict";
  }
}

bool references_device_malloc(std::string_view ptx) {
  // NVRTC declares the heap's entry points at the start of a line, as `.extern .func  (.param .b64
  // func_retval0) malloc` (or `.extern .func free`), the parameter list following on the next line.
  // One pass over the lines, each read once: a declaration is the whole of its line, so text a
  // candidate plants elsewhere (an inline-asm comment holding `.extern .func` many times) neither
  // counts nor makes any line be read again.
  constexpr std::string_view k_decl = ".extern .func";
  std::size_t pos = 0;
  while (pos < ptx.size()) {
    std::size_t end = ptx.find('\n', pos);
    if (end == std::string_view::npos) end = ptx.size();
    std::string_view line = ptx.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || !line.substr(first).starts_with(k_decl)) continue;
    line.remove_prefix(first + k_decl.size());
    if (!line.empty() && line.front() != ' ' && line.front() != '\t') continue;  // `.extern .funcs`: not a declaration
    const std::size_t last = line.find_last_not_of(" \t\r;");
    if (last == std::string_view::npos) continue;
    line = line.substr(0, last + 1);
    const std::string_view name = line.substr(line.find_last_of(" \t)") + 1);  // npos + 1 == 0: the whole text
    if (name == "malloc" || name == "free" || name == "__nv_aligned_device_malloc") return true;
  }
  return false;
}

}  // namespace leap::sandbox::detail

// SPDX-License-Identifier: Apache-2.0
#include "runner_pipe/evaluation_reply.hpp"

#include "runner_pipe/runner_control.hpp"

namespace leap::sandbox::detail {
namespace {

using nlohmann::json;

// The reply's keys. Text and optional fields are sent only when they hold something; `ok`,
// `restart` and `local_bytes_per_thread` always.
namespace key {
constexpr const char* ok = runner_keys::ok;  // runner_control.hpp
constexpr const char* error = runner_keys::error;
constexpr const char* verdict = "verdict";
constexpr const char* plan_error = "plan_error";
constexpr const char* cuda_error = "cuda_error";
constexpr const char* detail = "detail";
constexpr const char* when_timed = "when_timed";
constexpr const char* timed_run = "timed_run";
constexpr const char* trials = "trials";
constexpr const char* device = "device";
constexpr const char* restart = "restart";
constexpr const char* restart_reason = "restart_reason";
constexpr const char* local_bytes_per_thread = "local_bytes_per_thread";
constexpr const char* timing = "timing";
// a wrong answer's first difference
constexpr const char* first_index = "first_index";
constexpr const char* expected = "expected";
constexpr const char* actual = "actual";
constexpr const char* max_abs_error = "max_abs_error";
constexpr const char* max_rel_error = "max_rel_error";
// timing
constexpr const char* skipped = "skipped";
constexpr const char* method = "method";
constexpr const char* dropped_records = "dropped_records";
constexpr const char* reps = "reps";
constexpr const char* checked_runs = "checked_runs";
constexpr const char* matched_by_id = "matched_by_id";
constexpr const char* matched_by_window = "matched_by_window";
constexpr const char* note = "note";
constexpr const char* candidate = "candidate";
constexpr const char* reference = "reference";
constexpr const char* warmup = "warmup";
constexpr const char* launches = "launches";
constexpr const char* gpu_ms = "gpu_ms";
constexpr const char* min_gpu_ms = "min_gpu_ms";
constexpr const char* floor = "floor";
constexpr const char* bytes = "bytes";
constexpr const char* peak_bytes_per_s = "peak_bytes_per_s";
constexpr const char* headroom = "headroom";
constexpr const char* floor_ms = "floor_ms";
constexpr const char* below_floor = "below_floor";
constexpr const char* stopped_early = "stopped_early";
constexpr const char* stopping_rule_source = "stopping_rule_source";
// one side's timing
constexpr const char* median_ms = "median_ms";
constexpr const char* p25_ms = "p25_ms";
constexpr const char* p75_ms = "p75_ms";
constexpr const char* min_ms = "min_ms";
constexpr const char* spread = "spread";
constexpr const char* runs = "runs";
constexpr const char* events_median_ms = "events_median_ms";
constexpr const char* wall_median_ms = "wall_median_ms";
constexpr const char* cupti_median_ms = "cupti_median_ms";
}  // namespace key

// A NaN has no JSON number; the reply says "nan".
constexpr const char* k_nan_text = "nan";

void put_text(json& j, const char* name, const std::string& text) {
  if (!text.empty()) j[name] = text;
}

json side_to_json(const SideTiming& s) {
  json j = {{key::median_ms, s.median_ms},
            {key::p25_ms, s.p25_ms},
            {key::p75_ms, s.p75_ms},
            {key::min_ms, s.min_ms},
            {key::spread, s.spread},
            {key::runs, s.runs},
            {key::events_median_ms, s.events_median_ms},
            {key::wall_median_ms, s.wall_median_ms}};
  if (s.cupti_median_ms) j[key::cupti_median_ms] = *s.cupti_median_ms;
  return j;
}

json warm_up_to_json(const WarmUpReport& w) { return {{key::launches, w.launches}, {key::gpu_ms, w.gpu_ms}}; }

json timing_to_json(const TimingReport& t) {
  if (t.skipped) return {{key::skipped, *t.skipped}};
  json j = {{key::method, to_string(t.method)},
            {key::stopping_rule_source, to_string(t.stopping_rule_source)},
            {key::dropped_records, t.dropped_records},
            {key::reps, t.reps},
            {key::checked_runs, t.checked_runs},
            {key::matched_by_id, t.matched_by_id},
            {key::matched_by_window, t.matched_by_window},
            {key::candidate, side_to_json(t.candidate)},
            {key::reference, side_to_json(t.reference)},
            {key::warmup,
             {{key::candidate, warm_up_to_json(t.warmup_candidate)},
              {key::reference, warm_up_to_json(t.warmup_reference)},
              {key::min_gpu_ms, t.warmup_min_gpu_ms}}}};
  put_text(j, key::note, t.note);
  if (t.floor) {
    j[key::floor] = {{key::bytes, t.floor->bytes},
                     {key::peak_bytes_per_s, t.floor->peak_bytes_per_s},
                     {key::headroom, t.floor->headroom},
                     {key::floor_ms, t.floor->floor_ms}};
  }
  put_text(j, key::below_floor, t.below_floor);
  put_text(j, key::stopped_early, t.stopped_early);
  return j;
}

// A number, or NaN where there is none (JSON has no NaN: a NaN sent as JSON text arrives as null).
double number(const json& j, const char* name) {
  const auto it = j.find(name);
  return it != j.end() && it->is_number() ? it->get<double>() : NAN;
}

SideTiming side_from_json(const json& j) {
  SideTiming s;
  s.median_ms = number(j, key::median_ms);
  s.p25_ms = number(j, key::p25_ms);
  s.p75_ms = number(j, key::p75_ms);
  s.min_ms = number(j, key::min_ms);
  s.spread = number(j, key::spread);
  s.runs = j.value(key::runs, std::size_t{0});
  s.events_median_ms = number(j, key::events_median_ms);
  s.wall_median_ms = number(j, key::wall_median_ms);
  if (j.contains(key::cupti_median_ms)) s.cupti_median_ms = number(j, key::cupti_median_ms);
  return s;
}

WarmUpReport warm_up_from_json(const json& j) { return {j.value(key::launches, 0), j.value(key::gpu_ms, 0.0)}; }

TimingReport timing_from_json(const json& j) {
  TimingReport t;
  if (j.contains(key::skipped)) {
    t.skipped = j.value(key::skipped, "");
    return t;
  }
  t.method = j.value(key::method, "") == to_string(TimingMethod::cupti) ? TimingMethod::cupti : TimingMethod::events;
  t.stopping_rule_source = j.value(key::stopping_rule_source, "") == to_string(TimingMethod::cupti)
                               ? TimingMethod::cupti
                               : TimingMethod::events;
  t.dropped_records = j.value(key::dropped_records, std::size_t{0});
  t.reps = j.value(key::reps, 0);
  t.checked_runs = j.value(key::checked_runs, 0);
  t.matched_by_id = j.value(key::matched_by_id, std::size_t{0});
  t.matched_by_window = j.value(key::matched_by_window, std::size_t{0});
  t.note = j.value(key::note, "");
  t.candidate = side_from_json(j.value(key::candidate, json::object()));
  t.reference = side_from_json(j.value(key::reference, json::object()));
  const json warmup = j.value(key::warmup, json::object());
  t.warmup_candidate = warm_up_from_json(warmup.value(key::candidate, json::object()));
  t.warmup_reference = warm_up_from_json(warmup.value(key::reference, json::object()));
  t.warmup_min_gpu_ms = warmup.value(key::min_gpu_ms, 0.0);
  if (const auto it = j.find(key::floor); it != j.end()) {
    t.floor = FloorReport{it->value(key::bytes, std::uint64_t{0}), it->value(key::peak_bytes_per_s, 0.0),
                          it->value(key::headroom, 0.0), it->value(key::floor_ms, 0.0)};
  }
  t.below_floor = j.value(key::below_floor, "");
  t.stopped_early = j.value(key::stopped_early, "");
  return t;
}

}  // namespace

std::string_view to_string(TimingMethod method) noexcept {
  switch (method) {
    case TimingMethod::cupti: return "cupti";
    case TimingMethod::events: return "events";
  }
  return "unknown";
}

json to_json(const EvaluationReply& r) {
  json j = {{key::ok, r.ok}, {key::restart, r.restart}, {key::local_bytes_per_thread, r.local_bytes_per_thread}};
  put_text(j, key::error, r.error);
  if (r.verdict) j[key::verdict] = to_string(*r.verdict);
  if (r.plan_error) j[key::plan_error] = *r.plan_error;
  put_text(j, key::cuda_error, r.cuda_error);
  put_text(j, key::detail, r.detail);
  if (r.verdict == Verdict::wrong_answer || r.when_timed) j[key::when_timed] = r.when_timed;
  if (r.timed_run > 0) j[key::timed_run] = r.timed_run;
  if (r.mismatch) {
    const Mismatch& m = *r.mismatch;
    j[key::first_index] = m.first_index;
    j[key::expected] = m.expected;
    j[key::actual] = std::isnan(m.actual) ? json(k_nan_text) : json(m.actual);
    j[key::max_abs_error] = m.max_abs_error;
    j[key::max_rel_error] = m.max_rel_error;
  }
  if (r.trials > 0) j[key::trials] = r.trials;
  put_text(j, key::device, r.device);
  put_text(j, key::restart_reason, r.restart_reason);
  if (r.timing) j[key::timing] = timing_to_json(*r.timing);
  return j;
}

EvaluationReply evaluation_reply_from_json(const json& j) {
  EvaluationReply r;
  r.ok = j.value(key::ok, false);
  r.error = j.value(key::error, "");
  r.verdict = verdict_from_string(j.value(key::verdict, ""));
  if (j.contains(key::plan_error)) r.plan_error = j.value(key::plan_error, "");
  r.cuda_error = j.value(key::cuda_error, "");
  r.detail = j.value(key::detail, "");
  r.when_timed = j.value(key::when_timed, false);
  r.timed_run = j.value(key::timed_run, 0);
  if (j.contains(key::first_index)) {
    Mismatch m;
    m.first_index = j.value(key::first_index, std::size_t{0});
    m.expected = number(j, key::expected);
    m.actual = number(j, key::actual);  // "nan" is not a number: NaN
    m.max_abs_error = number(j, key::max_abs_error);
    m.max_rel_error = number(j, key::max_rel_error);
    r.mismatch = m;
  }
  r.trials = j.value(key::trials, 0);
  r.device = j.value(key::device, "");
  r.restart = j.value(key::restart, false);
  r.restart_reason = j.value(key::restart_reason, "");
  r.local_bytes_per_thread = j.value(key::local_bytes_per_thread, std::size_t{0});
  if (const auto it = j.find(key::timing); it != j.end()) r.timing = timing_from_json(*it);
  return r;
}

}  // namespace leap::sandbox::detail

// SPDX-License-Identifier: Apache-2.0
// An evaluation result as JSON, the one spelling that the CLI (eval --json), serve and the fleet share.
#include <cmath>
#include <nlohmann/json.hpp>

#include "leap/sandbox/evaluator.hpp"

namespace leap::sandbox {

using nlohmann::json;

std::string to_json(const EvalResult& r) {
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  auto timing = [&](const KernelTiming& t) {
    return json{{"method", t.method},
                {"median_ms", num(t.median_ms)},
                {"p25_ms", num(t.p25_ms)},
                {"p75_ms", num(t.p75_ms)},
                {"min_ms", num(t.min_ms)},
                {"spread", num(t.spread)},
                {"runs", t.runs},
                {"events_median_ms", num(t.events_median_ms)},
                {"wall_median_ms", num(t.wall_median_ms)}};
  };
  json j = {{"status", to_string(r.status)},
            {"verdict", r.verdict ? json(to_string(*r.verdict)) : json(nullptr)},
            {"speedup", num(r.speedup)},
            {"compile", json::parse(to_json(r.compile))},
            {"cuda_error", r.cuda_error},
            {"detail", r.detail},
            {"feedback", r.feedback},
            {"error", r.error},
            {"trials", r.trials},
            {"seed", r.seed},
            {"device", r.device},
            {"seconds", r.seconds}};
  if (r.launch_plan) {
    const LaunchPlanReport& p = *r.launch_plan;
    json kernels = json::array(), scratch = json::array();
    if (p.resolved) {
      for (const ResolvedKernelLaunch& k : p.resolved->kernels) {
        json args = json::array();
        for (const ResolvedArg& a : k.args) args.push_back(a.name);
        kernels.push_back({{"kernel", k.kernel},
                           {"grid", {k.shape.grid[0], k.shape.grid[1], k.shape.grid[2]}},
                           {"block", {k.shape.block[0], k.shape.block[1], k.shape.block[2]}},
                           {"shared_bytes", k.shape.shared_bytes},
                           {"args", args}});
      }
      for (const ResolvedScratch& s : p.resolved->scratch) {
        scratch.push_back({{"name", s.name}, {"dtype", to_string(s.dtype)}, {"count", s.count}, {"bytes", s.bytes}});
      }
    }
    std::string directives;  // the lines without the blank ones that keep them on their source lines
    const std::string text = to_directives(p.plan);
    for (std::size_t pos = 0, end = 0; pos < text.size(); pos = end + 1) {
      end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      if (end > pos) directives.append(text, pos, end - pos).push_back('\n');
    }
    j["launch_plan"] = {{"source", to_string(p.source)},
                        {"status", to_string(p.status)},
                        {"error", p.error},
                        {"directives", directives},
                        {"sizes", p.sizes},
                        {"kernels", kernels},
                        {"scratch", scratch}};
  } else {
    j["launch_plan"] = nullptr;
  }
  if (r.candidate.runs > 0) {
    const TimingEvidence& e = r.timing_evidence;
    auto warm_up = [](const WarmUpEvidence& w) { return json{{"launches", w.launches}, {"gpu_ms", w.gpu_ms}}; };
    json floor = nullptr;
    if (e.floor)
      floor = {{"bytes", e.floor->bytes},
               {"peak_bytes_per_s", e.floor->peak_bytes_per_s},
               {"headroom", e.floor->headroom},
               {"floor_ms", e.floor->floor_ms}};
    j["timings"] = {{"candidate", timing(r.candidate)},
                    {"reference", timing(r.reference)},
                    {"note", r.timing_note},
                    {"method", e.method},
                    {"stopping_rule_source", e.stopping_rule_source},
                    {"reps", e.reps},
                    {"checked_runs", e.checked_runs},
                    {"matched_by_id", e.matched_by_id},
                    {"matched_by_window", e.matched_by_window},
                    {"dropped_records", e.dropped_records},
                    {"warmup",
                     {{"candidate", warm_up(e.warmup_candidate)},
                      {"reference", warm_up(e.warmup_reference)},
                      {"min_gpu_ms", e.warmup_min_gpu_ms}}},
                    {"floor", floor},
                    {"stopped_early", e.stopped_early.empty() ? json(nullptr) : json(e.stopped_early)}};
  } else {
    j["timings"] = nullptr;
  }
  j["below_floor"] = r.below_floor.empty() ? json(nullptr) : json(r.below_floor);
  j["speedup_unknown"] = r.speedup_unknown == SpeedupUnknown::none
                             ? json(nullptr)
                             : json{{"reason", to_string(r.speedup_unknown)}, {"detail", r.speedup_unknown_detail}};
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace leap::sandbox

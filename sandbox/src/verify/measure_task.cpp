// SPDX-License-Identifier: Apache-2.0
#include "verify/measure_task.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "evaluation/correctness_inputs.hpp"
#include "task_spec/size_expr.hpp"
#include "verify/verify_context.hpp"

namespace leap::sandbox::verify {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::int64_t library_figure(const std::string& expr, const Sizes& sizes) {
  if (expr.empty()) return 0;
  try {
    return eval_size_expr(expr, sizes);
  } catch (const std::exception&) {  // validated with the task; an overflow at these sizes says nothing
    return 0;
  }
}

PreparedMeasure prepare_measure(const VerifyTarget& target, ModuleCache& cache, const MeasureOptions& options) {
  const TaskSpec& t = target.spec;
  PreparedMeasure p;
  p.label = "timing " + sizes_text(t.sizes);
  if (target.oracle_source.empty()) {
    p.failure = "the task has no oracle_file (an oracle is what the reference is checked against)";
    return p;
  }
  const BuiltModule m = cache.oracle_module(target.oracle_source, t.library.oracle_file);
  if (!m.ok) {
    p.failure = "the oracle does not compile: " + m.log;
    return p;
  }
  const auto start = std::chrono::steady_clock::now();
  p.trial = draw_trial(t, t.sizes, trial_seed(options.seed, 0));
  p.oracle = run_oracle(cache.load_oracle(m.path), t, p.trial);
  p.oracle_seconds = seconds_since(start);
  if (!p.oracle.ok()) p.failure = "the oracle failed at " + p.label + ": " + p.oracle.failure;
  return p;
}

MeasureReport measure_on_device(detail::GpuDriver& gpu, const ImageOf& image_of, const VerifyTarget& target,
                                const PreparedMeasure& prepared, const MeasureOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const TaskSpec& t = target.spec;
  MeasureReport r;
  r.checks.task = t.name;
  r.checks.origin = target.origin;
  r.oracle_seconds = prepared.oracle_seconds;
  r.bytes = library_figure(t.library.bytes, t.sizes);
  r.flops = library_figure(t.library.flops, t.sizes);
  if (const double peak = gpu.peak_memory_bandwidth(); peak > 0 && r.bytes > 0)
    r.floor_ms = 1e3 * static_cast<double>(r.bytes) / peak;
  auto finish = [&]() -> MeasureReport& {
    r.checks.seconds = seconds_since(start) + prepared.oracle_seconds;
    return r;
  };

  const DeviceImage image = image_of(t.reference_source);
  if (!image.error.empty()) {
    r.checks.add("compile:reference:device", false, image.error);
    return finish();
  }
  r.checks.add("compile:reference:device", true, "compiled");
  if (!prepared.failure.empty()) {
    r.checks.add("reference_vs_oracle:timing", false, "task '" + t.name + "': " + prepared.failure);
    return finish();
  }
  const DeviceTiming timing = timing_of(t);
  const DeviceRun run = run_on_device(gpu, image.image, plan_of(t, t.reference_source), t, prepared.trial,
                                      prepared.trial.seed, options.time ? &timing : nullptr);
  const std::string diff =
      run.ok() ? first_difference(t, run.outputs, prepared.oracle.outputs, prepared.trial.counts) : run.failure;
  if (!diff.empty()) {
    r.checks.add("reference_vs_oracle:timing", false, "task '" + t.name + "', " + prepared.label + ": " + diff);
    return finish();
  }
  r.checks.add("reference_vs_oracle:timing", true, prepared.label);
  if (options.time) {
    const std::string again =
        first_difference(t, run.outputs_after_timing, prepared.oracle.outputs, prepared.trial.counts);
    r.checks.add("reference_vs_oracle:after_timing", again.empty(),
                 again.empty() ? "the last of " + std::to_string(run.times.reps) + " timed runs agrees too"
                               : "task '" + t.name + "', " + prepared.label + ", after " +
                                     std::to_string(run.times.reps) + " timed runs: " + again);
  }
  r.times = run.times;
  return finish();
}

std::string to_text(const MeasureReport& r) {
  char figures[192];  // the task's name stays out of the fixed buffer: a user's spec names it
  if (r.ok() && r.times.reps > 0) {
    char floor[96] = "";
    if (r.floor_ms > 0)
      std::snprintf(floor, sizeof floor, "; floor %.4g ms, %.1fx", r.floor_ms, r.times.median_ms / r.floor_ms);
    std::snprintf(figures, sizeof figures, "  %.4g ms (median of %d, min %.4g%s)  oracle %.1f s\n", r.times.median_ms,
                  r.times.reps, r.times.min_ms, floor, r.oracle_seconds);
  } else {
    std::snprintf(figures, sizeof figures, "  oracle %.1f s\n", r.oracle_seconds);
  }
  std::string s = (r.ok() ? "PASS " : "FAIL ") + r.checks.task + figures;
  for (const CheckResult& c : r.checks.checks)
    if (!c.ok) s += "  FAIL " + c.name + ": " + c.detail + "\n";
  return s;
}

nlohmann::json to_json(const MeasureReport& r) {
  nlohmann::json j = to_json(r.checks);
  j["oracle_seconds"] = r.oracle_seconds;
  j["bytes"] = r.bytes;
  j["flops"] = r.flops;
  j["floor_ms"] = r.floor_ms;
  if (r.times.reps > 0)
    j["time"] = {{"reps", r.times.reps},     {"median_ms", r.times.median_ms}, {"min_ms", r.times.min_ms},
                 {"max_ms", r.times.max_ms}, {"spread", r.times.spread},       {"method", "events"}};
  else j["time"] = nullptr;
  return j;
}

}  // namespace leap::sandbox::verify

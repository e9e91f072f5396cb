// SPDX-License-Identifier: Apache-2.0
// Timing methods compared on real kernels: CUPTI activity (every kernel in the window), CUDA events
// and the host wall clock, for the reference and fast variants of a few tasks, repeated to show how
// repeatable the medians and the speedup are. Needs a GPU; without one it says so and exits 0.
// Usage: bench_timing [--repeats N] [--json FILE] [--expect-method cupti|events] [run switches] [TASK...]
// Exits 1 when any evaluation is not `correct` or was timed by another method than expected (CUPTI
// unless --expect-method says otherwise), so a script sees a timing run that proved nothing; 2 on
// bad usage. The run switches are leap::sandbox::RunSwitches (--allow-pageable-host-access, ...).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <leap/sandbox/run_switches.hpp>
#include <leap/sandbox/sandbox.hpp>
#include <string>
#include <vector>

#include "timing_run_check.hpp"

namespace sb = leap::sandbox;

int main(int argc, char** argv) {
  int repeats = 3;
  std::string json_path, expect_method = "cupti";
  std::vector<std::string> tasks;
  sb::RunSwitches switches;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (switches.parse(a)) continue;
    if (a == "--repeats" && i + 1 < argc) repeats = std::atoi(argv[++i]);
    else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else if (a == "--expect-method" && i + 1 < argc) expect_method = argv[++i];
    else if (a.rfind("-", 0) == 0) {
      std::fprintf(stderr,
                   "bench_timing: unknown option '%s'\nusage: bench_timing [--repeats N] [--json FILE] "
                   "[--expect-method cupti|events] [switches] [TASK...]\n%s",
                   a.c_str(), std::string(sb::run_switches_help()).c_str());
      return 2;
    } else tasks.push_back(a);
  }
  if (repeats < 1 || (expect_method != "cupti" && expect_method != "events")) {
    std::fprintf(stderr, "bench_timing: --repeats must be >= 1 and --expect-method cupti or events\n");
    return 2;
  }
  for (const std::string& name : tasks) {
    if (sb::find_builtin_task(name) == nullptr) {
      std::fprintf(stderr, "bench_timing: unknown task '%s'\n", name.c_str());
      return 2;
    }
  }
  if (tasks.empty()) tasks = {"scale_add", "softmax", "matmul", "transpose"};
  std::printf("bench_timing: run switches: %s; expecting method %s\n", switches.describe().c_str(),
              expect_method.c_str());
  const sb::GpuStatus gpu = sb::probe_gpu();
  if (!gpu.ok()) {
    std::printf("bench_timing: no GPU (%s: %s); nothing to time\n", std::string(sb::to_string(gpu.state)).c_str(),
                gpu.reason.c_str());
    if (!json_path.empty()) std::ofstream(json_path) << "{\"gpu\": false}\n";
    return 0;
  }
  sb::EvaluatorConfig config;
  config.seed = 1;
  switches.apply(config);
  int failures = 0;
  sb::Evaluator ev(config);
  std::string json = "{\"gpu\": true, \"device\": \"" + (gpu.devices.empty() ? std::string("?") : gpu.devices[0].name) +
                     "\", \"runs\": [";
  bool first = true;
  std::printf("%-10s %-5s %3s %-6s %11s %11s %11s %8s %5s %8s\n", "task", "var", "rep", "method", "cupti_ms",
              "events_ms", "wall_ms", "spread", "runs", "speedup");
  for (const std::string& name : tasks) {
    const sb::BuiltinTask* t = sb::find_builtin_task(name);
    for (int rep = 0; rep < repeats; ++rep) {
      const sb::EvalResult r = ev.evaluate(t->spec, t->variant("fast")->source);
      if (const std::string failure = leap_bench::timing_run_failure(r, expect_method); !failure.empty()) {
        std::printf("FAIL %-10s fast  %3d %s\n", name.c_str(), rep, failure.c_str());
        ++failures;
        if (!r.verdict || *r.verdict != leap::Verdict::correct || r.candidate.runs == 0) continue;
      }
      for (const auto& [label, k] :
           {std::pair<const char*, const sb::KernelTiming&>{"ref", r.reference}, {"fast", r.candidate}}) {
        std::printf("%-10s %-5s %3d %-6s %11.4f %11.4f %11.4f %8.4f %5d %8.3f\n", name.c_str(), label, rep,
                    k.method.c_str(), k.median_ms, k.events_median_ms, k.wall_median_ms, k.spread, k.runs, r.speedup);
        char buf[512];
        std::snprintf(
            buf, sizeof buf,
            "%s{\"task\": \"%s\", \"variant\": \"%s\", \"rep\": %d, \"method\": \"%s\", \"median_ms\": %.6f, "
            "\"events_median_ms\": %.6f, \"wall_median_ms\": %.6f, \"spread\": %.5f, \"runs\": %d, \"speedup\": %.5f}",
            first ? "" : ", ", name.c_str(), label, rep, k.method.c_str(), k.median_ms, k.events_median_ms,
            k.wall_median_ms, k.spread, k.runs, r.speedup);
        json += buf;
        first = false;
      }
      const sb::TimingEvidence& e = r.timing_evidence;
      std::printf(
          "  evidence: stopping rule read %s, %d runs checked, matched %zu by id and %zu by window, %zu "
          "dropped, warm-up %d/%d launches\n",
          e.stopping_rule_source.c_str(), e.checked_runs, e.matched_by_id, e.matched_by_window, e.dropped_records,
          e.warmup_candidate.launches, e.warmup_reference.launches);
      if (!r.timing_note.empty()) std::printf("  note: %s\n", r.timing_note.c_str());
    }
  }
  json += "], \"failures\": " + std::to_string(failures) + "}\n";
  if (!json_path.empty()) std::ofstream(json_path) << json;
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}

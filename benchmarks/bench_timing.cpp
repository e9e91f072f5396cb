// SPDX-License-Identifier: Apache-2.0
// Timing methods compared on real kernels: CUPTI activity (every kernel in the window), CUDA events
// and the host wall clock, for the reference and fast variants of a few tasks, repeated to show how
// repeatable the medians and the speedup are. Needs a GPU; without one it says so and exits 0.
// Usage: bench_timing [--repeats N] [--json FILE] [TASK...]
#include <cmath>
#include <cstdio>
#include <fstream>
#include <leap/sandbox/sandbox.hpp>
#include <string>
#include <vector>

namespace sb = leap::sandbox;

int main(int argc, char** argv) {
  int repeats = 3;
  std::string json_path;
  std::vector<std::string> tasks;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeats" && i + 1 < argc) repeats = std::atoi(argv[++i]);
    else if (a == "--json" && i + 1 < argc) json_path = argv[++i];
    else tasks.push_back(a);
  }
  if (tasks.empty()) tasks = {"scale_add", "softmax", "matmul", "transpose"};
  const sb::GpuStatus gpu = sb::probe_gpu();
  if (!gpu.ok()) {
    std::printf("bench_timing: no GPU (%s: %s); nothing to time\n", std::string(sb::to_string(gpu.state)).c_str(),
                gpu.reason.c_str());
    if (!json_path.empty()) std::ofstream(json_path) << "{\"gpu\": false}\n";
    return 0;
  }
  sb::EvaluatorConfig config;
  config.seed = 1;
  sb::Evaluator ev(config);
  std::string json = "{\"gpu\": true, \"device\": \"" + (gpu.devices.empty() ? std::string("?") : gpu.devices[0].name) +
                     "\", \"runs\": [";
  bool first = true;
  std::printf("%-10s %-5s %3s %-6s %11s %11s %11s %8s %5s %8s\n", "task", "var", "rep", "method", "cupti_ms",
              "events_ms", "wall_ms", "spread", "runs", "speedup");
  for (const std::string& name : tasks) {
    const sb::BuiltinTask* t = sb::find_builtin_task(name);
    if (t == nullptr) continue;
    for (int rep = 0; rep < repeats; ++rep) {
      const sb::EvalResult r = ev.evaluate(t->spec, t->variant("fast")->source);
      if (!r.verdict || *r.verdict != leap::Verdict::correct) {
        std::printf("%-10s fast  %3d not correct: %s %s\n", name.c_str(), rep, r.detail.c_str(), r.error.c_str());
        continue;
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
      if (!r.timing_note.empty()) std::printf("  note: %s\n", r.timing_note.c_str());
    }
  }
  json += "]}\n";
  if (!json_path.empty()) std::ofstream(json_path) << json;
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// GPU suite (label gpu): every shipped variant gets the verdict it ships with, and each hostile
// kernel (tests/gpu/hostile_cases.hpp) gets exactly its one verdict and leaves the harness healthy;
// the cheats that only show when timed run through timed evaluations. Prints one PASS/FAIL line per
// case with its timing figures (tests/gpu/run.sh collects them). Exits 77 (CTest: skipped) without a GPU.
#include <cstdio>
#include <cstdlib>
#include <leap/sandbox/sandbox.hpp>
#include <string>
#include <vector>

#include "evaluation/timer_choice.hpp"  // internal: which timer the GPU runner uses here
#include "hostile_cases.hpp"

namespace sb = leap::sandbox;

namespace {

int failures = 0;

std::string name_of(const sb::EvalResult& r) {
  if (r.verdict) return std::string(leap::to_string(*r.verdict));
  return r.status == sb::EvalStatus::no_gpu ? "no_gpu" : "error";
}

bool expect(const std::string& what, const sb::EvalResult& r, const std::string& expected) {
  const std::string got = name_of(r);
  const bool ok = got == expected;
  std::printf("%s %-62s %-14s (%.2f s)", ok ? "PASS" : "FAIL", what.c_str(), got.c_str(), r.seconds);
  if (!r.cuda_error.empty()) std::printf(" %s", r.cuda_error.c_str());
  if (r.candidate.runs > 0) {
    std::printf(" speedup %.3f, candidate %.4f ms (%s, spread %.3f, %d runs), reference %.4f ms", r.speedup,
                r.candidate.median_ms, r.candidate.method.c_str(), r.candidate.spread, r.candidate.runs,
                r.reference.median_ms);
  }
  if (!ok || expected != "correct") std::printf(" | %s%s", r.detail.substr(0, 300).c_str(), r.error.c_str());
  std::printf("\n");
  std::fflush(stdout);
  if (!ok) ++failures;
  return ok;
}

}  // namespace

int main() {
  const sb::GpuStatus gpu = sb::probe_gpu();
  if (!gpu.ok()) {
    std::printf("no GPU (%s: %s): skipped\n", std::string(sb::to_string(gpu.state)).c_str(), gpu.reason.c_str());
    return 77;
  }
  sb::EvaluatorConfig config;
  config.time = false;
  config.seed = 12345;
  sb::Evaluator ev(config);
  sb::EvaluatorConfig timed_config = config;
  timed_config.time = true;
  sb::Evaluator timed(timed_config);
  const sb::TimerChoice timer = sb::timer_choice();
  std::printf("device: %s, arch %s; timer: %s (%s)\n", gpu.devices.empty() ? "?" : gpu.devices[0].name.c_str(),
              ev.arch().c_str(), timer.method.c_str(), timer.reason.c_str());

  // 1. Every shipped variant.
  for (const sb::BuiltinTask& t : sb::builtin_tasks()) {
    for (const sb::TaskVariant& v : t.variants)
      expect(t.spec.name + "/" + v.name, ev.evaluate(t.spec, v.source), v.expect);
  }

  // 2. Hostile kernels on a smaller scale_add: two size sets of three trials (six checked calls).
  sb::TaskSpec task = sb::find_builtin_task("scale_add")->spec;
  task.sizes = {{"n", 1 << 20}};
  task.check_sizes = {{{"n", 1001}}};
  task.trials = 3;
  task.time_limit_ms = 3000;
  const std::string fast = sb::find_builtin_task("scale_add")->variant("fast")->source;
  for (const sb::hostile::Case& c : sb::hostile::cases()) {
    const sb::EvalResult r = (c.timed ? timed : ev).evaluate(task, c.source);
    expect(std::string(c.timed ? "[timed] " : "") + c.name, r, c.expect);
    expect("  healthy after it", ev.evaluate(task, fast), "correct");
  }

  // 2b. Launch plans: run, checked and timed as one sequence, or refused before any launch.
  for (const sb::hostile::PlanCase& c : sb::hostile::plan_cases()) {
    const sb::BuiltinTask& t = *sb::find_builtin_task(c.task);
    const sb::EvalResult r = (c.timed ? timed : ev).evaluate(t.spec, c.source);
    expect(std::string(c.timed ? "[timed] " : "") + c.name, r, c.expect);
    expect("  healthy after it", ev.evaluate(t.spec, t.variant("fast")->source), "correct");
  }

  // 3. The memoiser is paid its honest speed: within 1.5x of the same kernel without the memo.
  {
    const sb::EvalResult honest = timed.evaluate(task, sb::hostile::scale_add_kernel(sb::hostile::k_compute));
    expect("[timed] the memoiser's honest twin", honest, "correct");
    for (const sb::hostile::Case& c : sb::hostile::cases()) {
      if (c.name != "memoises in __device__ globals") continue;
      const sb::EvalResult memo = timed.evaluate(task, c.source);
      const bool fair = memo.speedup > 0 && honest.speedup > 0 && memo.speedup < 1.5 * honest.speedup;
      std::printf("%s memoiser speedup %.3f vs honest twin %.3f\n", fair ? "PASS" : "FAIL", memo.speedup,
                  honest.speedup);
      if (!fair) ++failures;
    }
  }

  // 4. Timing on two tasks.
  for (const char* name : {"matmul", "transpose"}) {
    const sb::BuiltinTask& t = *sb::find_builtin_task(name);
    const sb::EvalResult r = timed.evaluate(t.spec, t.variant("fast")->source);
    expect(std::string("[timed] ") + name + "/fast", r, "correct");
    std::printf("     %s: events median %.4f ms, wall median %.4f ms%s%s\n", name, r.candidate.events_median_ms,
                r.candidate.wall_median_ms, r.timing_note.empty() ? "" : "; note: ", r.timing_note.c_str());
    if (!(r.speedup > 0)) ++failures;
  }
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}

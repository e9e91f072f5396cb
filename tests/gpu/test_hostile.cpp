// SPDX-License-Identifier: Apache-2.0
// GPU suite (label gpu): every shipped variant gets the verdict it ships with, and each hostile
// kernel (tests/gpu/hostile_cases.hpp) gets exactly its one verdict and leaves the harness healthy;
// the cheats that only show when timed run through timed evaluations. Prints one PASS/FAIL line per
// case with its timing figures (tests/gpu/run.sh collects them). Exits 77 (CTest: skipped) without a GPU.
// Takes the run switches of leap-sandbox eval (--allow-pageable-host-access, ...; run_switches.hpp)
// and keeps one GPU runner at a time, so it runs in EXCLUSIVE_PROCESS compute mode; 2 on bad usage.
#include <cstdio>
#include <cstdlib>
#include <leap/sandbox/run_switches.hpp>
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

int main(int argc, char** argv) {
  sb::RunSwitches switches;  // the same switches as leap-sandbox eval (run_switches.hpp)
  for (int i = 1; i < argc; ++i) {
    if (switches.parse(argv[i])) continue;
    std::fprintf(stderr, "leap_sandbox_gpu_tests: unknown option '%s'\nusage: leap_sandbox_gpu_tests [switches]\n%s",
                 argv[i], std::string(sb::run_switches_help()).c_str());
    return 2;
  }
  std::printf("run switches: %s\n", switches.describe().c_str());
  const sb::GpuStatus gpu = sb::probe_gpu();
  if (!gpu.ok()) {
    std::printf("no GPU (%s: %s): skipped\n", std::string(sb::to_string(gpu.state)).c_str(), gpu.reason.c_str());
    return 77;
  }
  sb::EvaluatorConfig config;
  config.time = false;
  config.seed = 12345;
  config.gpu = gpu;
  switches.apply(config);
  sb::EvaluatorConfig timed_config = config;
  timed_config.time = true;
  const sb::TimerChoice timer = sb::timer_choice();

  // Hostile kernels on a smaller scale_add: two size sets of three trials (six checked calls).
  sb::TaskSpec task = sb::find_builtin_task("scale_add")->spec;
  task.sizes = {{"n", 1 << 20}};
  task.check_sizes = {{{"n", 1001}}};
  task.trials = 3;
  task.time_limit_ms = 3000;
  const std::string fast = sb::find_builtin_task("scale_add")->variant("fast")->source;

  // One evaluator, so one GPU runner and one CUDA context, at a time: the untimed phase, then the
  // timed one. The suite so runs in EXCLUSIVE_PROCESS compute mode too, where a second context fails.
  {
    sb::Evaluator ev(config);
    std::printf("device: %s, arch %s; timer: %s (%s); one runner at a time\n",
                gpu.devices.empty() ? "?" : gpu.devices[0].name.c_str(), ev.arch().c_str(), timer.method.c_str(),
                timer.reason.c_str());

    // 1. Every shipped variant.
    for (const sb::BuiltinTask& t : sb::builtin_tasks()) {
      for (const sb::TaskVariant& v : t.variants)
        expect(t.spec.name + "/" + v.name, ev.evaluate(t.spec, v.source), v.expect);
    }
    // 2. The hostile kernels whose cheat shows untimed, each followed by an honest one.
    for (const sb::hostile::Case& c : sb::hostile::cases()) {
      if (c.timed) continue;
      expect(c.name, ev.evaluate(task, c.source), c.expect);
      expect("  healthy after it", ev.evaluate(task, fast), "correct");
    }
    // 2b. Launch plans: run and checked as one sequence, or refused before any launch.
    for (const sb::hostile::PlanCase& c : sb::hostile::plan_cases()) {
      if (c.timed) continue;
      const sb::BuiltinTask& t = *sb::find_builtin_task(c.task);
      expect(c.name, ev.evaluate(t.spec, c.source), c.expect);
      expect("  healthy after it", ev.evaluate(t.spec, t.variant("fast")->source), "correct");
    }
  }
  sb::Evaluator timed(timed_config);
  for (const sb::hostile::Case& c : sb::hostile::cases()) {
    if (!c.timed) continue;
    expect("[timed] " + c.name, timed.evaluate(task, c.source), c.expect);
    expect("  healthy after it", timed.evaluate(task, fast), "correct");
  }
  for (const sb::hostile::PlanCase& c : sb::hostile::plan_cases()) {
    if (!c.timed) continue;
    const sb::BuiltinTask& t = *sb::find_builtin_task(c.task);
    expect("[timed] " + c.name, timed.evaluate(t.spec, c.source), c.expect);
    expect("  healthy after it", timed.evaluate(t.spec, t.variant("fast")->source), "correct");
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

  // 4. Timing on two tasks, with the evidence of how each was measured.
  for (const char* name : {"matmul", "transpose"}) {
    const sb::BuiltinTask& t = *sb::find_builtin_task(name);
    const sb::EvalResult r = timed.evaluate(t.spec, t.variant("fast")->source);
    expect(std::string("[timed] ") + name + "/fast", r, "correct");
    const sb::TimingEvidence& e = r.timing_evidence;
    std::printf(
        "     %s: events median %.4f ms, wall median %.4f ms; %s, stopping rule read %s, matched %zu by id, "
        "%zu by window, %zu dropped, warm-up %d/%d launches%s%s\n",
        name, r.candidate.events_median_ms, r.candidate.wall_median_ms, e.method.c_str(),
        e.stopping_rule_source.c_str(), e.matched_by_id, e.matched_by_window, e.dropped_records,
        e.warmup_candidate.launches, e.warmup_reference.launches,
        r.timing_note.empty() ? "" : "; note: ", r.timing_note.c_str());
    if (!(r.speedup > 0)) ++failures;
  }
  std::printf("%d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}

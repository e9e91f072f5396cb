// SPDX-License-Identifier: Apache-2.0
#include "verify/verify_task.hpp"

#include <sys/resource.h>

#include <chrono>
#include <stdexcept>

#include "evaluation/correctness_inputs.hpp"
#include "evaluation/output_comparison.hpp"
#include "task_spec/size_expr.hpp"
#include "verify/nvrtc_check.hpp"
#include "verify/reduced_sizes.hpp"
#include "verify/verify_context.hpp"

namespace leap::sandbox::verify {

std::string first_difference(const TaskSpec& task, const std::vector<Bytes>& actual, const std::vector<Bytes>& expected,
                             const std::vector<std::size_t>& counts) {
  for (std::size_t i = 0; i < task.params.size(); ++i) {
    const Param& p = task.params[i];
    if (!is_output(p)) continue;
    const Comparison cmp =
        compare(p.dtype, actual[i].data(), expected[i].data(), counts[i], task.tolerance_for(p.dtype));
    if (!cmp.ok) return describe(cmp, p.name, counts[i]);
  }
  return "";
}

namespace {

double process_cpu_seconds() {
  double s = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    getrusage(who, &u);
    s += static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  }
  return s;
}

// A reference is launched by the task's `launch`, which the prompt describes; a plan in it would be
// ignored on the GPU and followed here.
void check_reference_has_no_plan(VerifyContext& c) {
  const SourcePlan plan = plan_of(c.spec(), c.spec().reference_source);
  if (!plan.error.empty()) c.report.add("reference_launch", false, "a malformed launch-plan line: " + plan.error);
  else if (!plan.own_launch)
    c.report.add(
        "reference_launch", false,
        "the reference declares `// leap-launch:` lines; a reference runs with the task's launch: remove them");
  else c.report.add("reference_launch", true, "the task's own launch");
}

// The reference for the CPU runtime and the oracle as a shared object, from the cache when unchanged.
void compile_reference_and_oracle(VerifyContext& c) {
  const BuiltModule ref = c.cache.kernel_module(c.spec().reference_source, "reference.cu");
  if (ref.ok) {
    try {
      c.reference = &c.cache.load_kernels(ref.path);
      if (c.reference->find(c.spec().entry) == nullptr) {
        c.report.add("compile:reference", false, "no kernel '" + c.spec().entry + "' in reference.cu");
        c.reference = nullptr;
      } else {
        c.report.add("compile:reference", true, ref.cached ? "cached" : "compiled");
      }
    } catch (const std::exception& e) {
      c.report.add("compile:reference", false, e.what());
    }
  } else {
    c.report.add("compile:reference", false, ref.log);
  }
  if (c.target.oracle_source.empty()) {
    c.report.add("compile:oracle", false,
                 "the task has no oracle_file (an oracle is what the reference is checked against)");
    return;
  }
  const BuiltModule orc = c.cache.oracle_module(c.target.oracle_source, c.spec().library.oracle_file);
  if (!orc.ok) {
    c.report.add("compile:oracle", false, orc.log);
    return;
  }
  try {
    c.oracle = c.cache.load_oracle(orc.path);
    c.report.add("compile:oracle", true, orc.cached ? "cached" : "compiled");
  } catch (const std::exception& e) {
    c.report.add("compile:oracle", false, e.what());
  }
}

// The reference as the GPU path compiles it (NVRTC): the host compiler taking it proves nothing there.
void check_reference_compiles_with_nvrtc(VerifyContext& c) {
  const NvrtcOutcome n = nvrtc_compile(c.spec().reference_source, c.cache.dir());
  if (!n.available) c.report.add("compile:reference:nvrtc", false, "NVRTC is not usable here: " + n.log);
  else if (!n.compiled) c.report.add("compile:reference:nvrtc", false, "NVRTC refused it: " + n.log);
  else c.report.add("compile:reference:nvrtc", true, "compiled");
}

// Every check size set and the reduced timing size, each with its trial and the oracle's answer.
void draw_size_sets(VerifyContext& c) {
  const TaskSpec& t = c.spec();
  std::vector<std::pair<std::string, Sizes>> sets;
  for (std::size_t i = 0; i < t.check_sizes.size(); ++i)
    sets.emplace_back("check_sizes[" + std::to_string(i) + "] " + sizes_text(t.check_sizes[i]), t.check_sizes[i]);
  const Sizes reduced = reduced_timing_sizes(t);
  sets.emplace_back("timing (reduced) " + sizes_text(reduced), reduced);
  std::uint64_t n = 0;
  for (auto& [label, sizes] : sets) {
    SizeSetRun run;
    run.label = label;
    run.trial = draw_trial(t, sizes, trial_seed(c.options.seed, n++));
    if (c.oracle != nullptr) run.oracle = run_oracle(c.oracle, t, run.trial);
    c.runs.push_back(std::move(run));
  }
}

}  // namespace

TaskReport verify_task(const VerifyTarget& target, ModuleCache& cache, const VerifyOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  TaskReport report;
  report.task = target.spec.name;
  report.origin = target.origin;
  VerifyContext c{target, cache, options, report};
  try {
    check_reference_has_no_plan(c);
    compile_reference_and_oracle(c);
    check_reference_compiles_with_nvrtc(c);
    if (c.oracle != nullptr) {
      draw_size_sets(c);
      if (c.reference != nullptr) check_reference_against_oracle(c);
      if (options.degeneracy) check_degeneracy(c);
    }
    if (options.negatives && !c.runs.empty()) check_negatives(c);
    if (options.variants) check_variants(c);
  } catch (const std::exception& e) {  // a broken environment (no compiler, no temporary directory)
    report.add("environment", false, e.what());
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.cpu_seconds = process_cpu_seconds() - cpu_start;
  return report;
}

}  // namespace leap::sandbox::verify

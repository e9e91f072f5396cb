// SPDX-License-Identifier: Apache-2.0
// Step 4: each shipped variant gets the verdict it expects. Those expected to compile must compile
// with NVRTC, as the GPU path compiles them; they are the project's own sources, so they run on the
// CPU runtime (their own launch plans, if they declare
// any) at every size set, and are judged as the GPU runner judges a candidate: held to the
// reference's outputs by the sandbox's comparison. One expected to fail to compile is compiled by
// NVRTC, as a candidate would be.
#include "verify/nvrtc_check.hpp"
#include "verify/verify_context.hpp"

namespace leap::sandbox::verify {

namespace {

struct Judged {
  std::string verdict;  // correct, wrong_answer, runtime_error, compile_error
  std::string detail;
};

Judged judge_on_cpu(VerifyContext& c, const TaskVariant& v) {
  const TaskSpec& t = c.spec();
  const BuiltModule m = c.cache.kernel_module(v.source, v.name + ".cu");
  if (!m.ok) return {"compile_error", "for the CPU runtime: " + m.log};
  const cpu_runtime::Module& module = c.cache.load_kernels(m.path);
  const SourcePlan plan = plan_of(t, v.source);
  const std::vector<cpu_runtime::Schedule> schedules{cpu_runtime::Schedule::in_order(),
                                                     cpu_runtime::Schedule::random(c.options.seed + 7)};
  for (const SizeSetRun& run : c.runs) {
    if (!run.reference || !run.reference->ok()) continue;
    for (const cpu_runtime::Schedule& s : schedules) {
      const KernelRun k = run_kernels(module, plan, t, run.trial, s, run.trial.seed + 1);
      if (!k.ok()) return {"runtime_error", run.label + ", schedule " + s.name() + ": " + k.failure};
      const std::string diff = first_difference(t, k.outputs, run.reference->outputs, run.trial.counts);
      if (!diff.empty()) return {"wrong_answer", run.label + ", schedule " + s.name() + ": " + diff};
    }
  }
  return {"correct", "agrees with the reference at every size set"};
}

}  // namespace

void check_variants(VerifyContext& c) {
  const bool reference_ran = !c.runs.empty() && c.runs.back().reference && c.runs.back().reference->ok();
  for (const TaskVariant& v : c.target.variants) {
    if (v.name == "reference") continue;
    const std::string name = "variant:" + v.name;
    Judged j;
    if (v.expect == "compile_error") {
      const NvrtcOutcome n = nvrtc_compile(v.source, c.cache.dir());
      if (!n.available) {
        c.report.add(name, false, "NVRTC is not usable here: " + n.log);
        continue;
      }
      if (n.compiled) j = {"correct", "NVRTC compiled it"};
      else if (n.source_error) j = {"compile_error", "NVRTC refused it"};
      else j = {"a compile that ended without NVRTC's verdict", n.log};  // a limit says nothing of the source
    } else {
      // The GPU path compiles it with NVRTC: a source only the host compiler takes would be a
      // compile_error there, whatever the CPU runtime says of it.
      const NvrtcOutcome n = nvrtc_compile(v.source, c.cache.dir());
      if (!n.available) {
        c.report.add(name, false, "NVRTC is not usable here: " + n.log);
        continue;
      }
      if (!n.compiled) {
        c.report.add(name, false, "expected " + v.expect + ", got compile_error: NVRTC refused it: " + n.log);
        continue;
      }
      if (!reference_ran) {
        c.report.add(name, false, "not judged: the reference did not run");
        continue;
      }
      j = judge_on_cpu(c, v);
    }
    const bool ok = j.verdict == v.expect;
    c.report.add(name, ok, (ok ? "" : "expected " + v.expect + ", got ") + j.verdict + ": " + j.detail);
  }
}

}  // namespace leap::sandbox::verify

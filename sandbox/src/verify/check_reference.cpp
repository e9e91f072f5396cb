// SPDX-License-Identifier: Apache-2.0
// Step 2: the reference, on the CPU runtime under every schedule, against the oracle at every size set.
#include "verify/verify_context.hpp"

namespace leap::sandbox::verify {

void check_reference_against_oracle(VerifyContext& c) {
  const TaskSpec& t = c.spec();
  const SourcePlan plan = plan_of(t, t.reference_source);
  const std::vector<cpu_runtime::Schedule> schedules =
      cpu_runtime::Schedule::standard(c.options.seed, c.options.random_schedules);
  std::string failure;
  std::size_t runs = 0;
  for (SizeSetRun& run : c.runs) {
    if (!run.oracle.ok()) {
      failure = "task '" + t.name + "', " + run.label + ": " + run.oracle.failure;
      break;
    }
    for (const cpu_runtime::Schedule& s : schedules) {
      KernelRun k = run_kernels(*c.reference, plan, t, run.trial, s, run.trial.seed);
      ++runs;
      std::string diff = k.ok() ? first_difference(t, k.outputs, run.oracle.outputs, run.trial.counts) : k.failure;
      if (!diff.empty()) {
        failure = "task '" + t.name + "', " + run.label + ", schedule " + s.name() + ": " + diff;
        break;
      }
      if (!run.reference) run.reference = std::move(k);
    }
    if (!failure.empty()) break;
  }
  if (!failure.empty()) {
    c.report.add("reference_vs_oracle", false, failure);
    return;
  }
  c.report.add("reference_vs_oracle", true,
               std::to_string(c.runs.size()) + " size sets x " + std::to_string(schedules.size()) + " schedules (" +
                   c.runs.back().label + ")");
}

}  // namespace leap::sandbox::verify

// SPDX-License-Identifier: Apache-2.0
// Step 5: a task a constant answer could pass is no task. At the reduced timing size, from the
// oracle (which step 2 holds the reference to): the largest output magnitude is far above the
// absolute tolerance, another seed gives outputs that fail the comparison with these, and so does
// redrawing any one input buffer or changing any one float scalar. Each is checked, not assumed.
#include <cmath>

#include "evaluation/correctness_inputs.hpp"
#include "verify/verify_context.hpp"

namespace leap::sandbox::verify {

namespace {

constexpr double k_magnitude_over_atol = 20.0;

void check_magnitude(VerifyContext& c, const SizeSetRun& run) {
  const TaskSpec& t = c.spec();
  for (std::size_t i = 0; i < t.params.size(); ++i) {
    const Param& p = t.params[i];
    if (!is_output(p)) continue;
    double largest = 0;
    for (double v : run.oracle.values[i])
      if (std::isfinite(v)) largest = std::max(largest, std::abs(v));
    const double atol = t.tolerance_for(p.dtype).atol;
    const bool ok = atol > 0 ? largest >= k_magnitude_over_atol * atol : largest > 0;
    char detail[200];
    std::snprintf(detail, sizeof detail, "%s: largest |output| %.4g, atol %.3g (needs at least %g x atol%s)",
                  p.name.c_str(), largest, atol, k_magnitude_over_atol, atol > 0 ? "" : ", or non-zero");
    c.report.add("degenerate:magnitude:" + p.name, ok,
                 ok ? std::string(detail) : "task '" + t.name + "', " + run.label + ": " + detail);
  }
}

// The oracle's outputs for a changed trial must fail the comparison with the original's.
void require_change(VerifyContext& c, const SizeSetRun& run, const Trial& changed, const std::string& name,
                    const std::string& what) {
  const OracleRun other = run_oracle(c.oracle, c.spec(), changed);
  if (!other.ok()) {
    c.report.add(name, false, other.failure);
    return;
  }
  const std::string diff = first_difference(c.spec(), other.outputs, run.oracle.outputs, run.trial.counts);
  if (diff.empty())
    c.report.add(name, false,
                 "task '" + c.spec().name + "', " + run.label + ": " + what +
                     " leaves every output within tolerance: the output does not depend on it");
  else c.report.add(name, true, what + " changes the output (" + diff + ")");
}

}  // namespace

void check_degeneracy(VerifyContext& c) {
  const TaskSpec& t = c.spec();
  const SizeSetRun& run = c.runs.back();  // the reduced timing size
  if (!run.oracle.ok()) return;           // reported by step 2
  check_magnitude(c, run);
  require_change(c, run, draw_trial(t, run.trial.sizes, trial_seed(run.trial.seed, 1000)), "degenerate:seeds",
                 "another seed");
  for (std::size_t i = 0; i < t.params.size(); ++i) {
    const Param& p = t.params[i];
    if (is_input(p)) {
      Trial changed = run.trial;
      redraw_buffer(t, changed, i, trial_seed(run.trial.seed, 2000 + i));
      require_change(c, run, changed, "degenerate:input:" + p.name, "redrawing '" + p.name + "'");
    } else if (p.kind == ParamKind::scalar && p.dtype == DType::float32) {
      Trial changed = run.trial;
      const double v = changed.scalars[i];
      changed.scalars[i] = static_cast<float>(v + 0.5 + 0.5 * std::abs(v));
      require_change(c, run, changed, "degenerate:scalar:" + p.name,
                     "changing '" + p.name + "' from " + std::to_string(v) + " to " + std::to_string(changed.scalars[i]));
    }
  }
}

}  // namespace leap::sandbox::verify

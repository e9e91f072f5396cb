// SPDX-License-Identifier: Apache-2.0
#include "verify/oracle_run.hpp"

#include <exception>
#include <stdexcept>

#include "evaluation/element_values.hpp"

namespace leap::sandbox::verify {

namespace {

// The oracle's view of one trial; a name the task does not declare (or of the wrong kind) is an
// error that names it.
class TrialProblem final : public oracle::Problem {
 public:
  TrialProblem(const TaskSpec& task, const Trial& trial) : task_(task), trial_(trial), values_(task.params.size()) {
    for (std::size_t i = 0; i < task.params.size(); ++i) {
      const Param& p = task.params[i];
      if (p.kind != ParamKind::buffer) continue;
      values_[i].resize(trial.counts[i]);
      if (p.role == Role::out) continue;  // zero-filled: the oracle writes every element
      for (std::size_t k = 0; k < trial.counts[i]; ++k)
        values_[i][k] = element_value(p.dtype, trial.buffers[i].data(), k);
    }
  }

  std::int64_t size(std::string_view name) const override {
    const auto it = trial_.sizes.find(name);
    if (it == trial_.sizes.end()) throw std::invalid_argument("oracle: no size named '" + std::string(name) + "'");
    return it->second;
  }
  double scalar(std::string_view name) const override {
    const std::size_t i = find(name, "scalar");
    if (task_.params[i].kind != ParamKind::scalar)
      throw std::invalid_argument("oracle: '" + std::string(name) + "' is a buffer, not a scalar");
    return trial_.scalars[i];
  }
  std::span<const double> in(std::string_view name) const override {
    const std::size_t i = find(name, "buffer");
    if (task_.params[i].kind != ParamKind::buffer || task_.params[i].role == Role::out)
      throw std::invalid_argument("oracle: '" + std::string(name) + "' is not an in or inout buffer");
    return values_[i];
  }
  std::span<double> out(std::string_view name) override {
    const std::size_t i = find(name, "buffer");
    if (task_.params[i].kind != ParamKind::buffer || task_.params[i].role == Role::in)
      throw std::invalid_argument("oracle: '" + std::string(name) + "' is not an out or inout buffer");
    return values_[i];
  }

  std::vector<std::vector<double>>& values() { return values_; }

 private:
  std::size_t find(std::string_view name, const char* what) const {
    for (std::size_t i = 0; i < task_.params.size(); ++i)
      if (task_.params[i].name == name) return i;
    throw std::invalid_argument(std::string("oracle: no ") + what + " named '" + std::string(name) + "'");
  }
  const TaskSpec& task_;
  const Trial& trial_;
  std::vector<std::vector<double>> values_;
};

}  // namespace

OracleRun run_oracle(ModuleCache::OracleEntry entry, const TaskSpec& task, const Trial& trial) {
  OracleRun run;
  TrialProblem problem(task, trial);
  try {
    entry(problem);
  } catch (const std::exception& e) {
    run.failure = std::string("the oracle threw: ") + e.what();
    return run;
  }
  run.outputs.resize(task.params.size());
  run.values.resize(task.params.size());
  for (std::size_t i = 0; i < task.params.size(); ++i) {
    const Param& p = task.params[i];
    if (!is_output(p)) continue;
    run.values[i] = std::move(problem.values()[i]);
    run.outputs[i].assign(trial.counts[i] * dtype_size(p.dtype), 0);
    for (std::size_t k = 0; k < trial.counts[i]; ++k) store_element(p.dtype, run.outputs[i].data(), k, run.values[i][k]);
  }
  return run;
}

}  // namespace leap::sandbox::verify

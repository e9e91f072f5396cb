// SPDX-License-Identifier: Apache-2.0
// What the steps of one task's verification share: the task, its compiled reference and oracle, and
// for each size set the trial, the oracle's answer and the reference's outputs. Internal.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "verify/kernel_run.hpp"
#include "verify/oracle_run.hpp"
#include "verify/report.hpp"
#include "verify/verify_task.hpp"

namespace leap::sandbox::verify {

struct SizeSetRun {
  std::string label;  // "check_sizes[0] {rows=3, cols=1001}" or "timing (reduced) {...}"
  Trial trial;
  OracleRun oracle;
  std::optional<KernelRun> reference;  // in order; set when it ran
};

struct VerifyContext {
  const VerifyTarget& target;
  ModuleCache& cache;
  const VerifyOptions& options;
  TaskReport& report;
  const cpu_runtime::Module* reference = nullptr;
  ModuleCache::OracleEntry oracle = nullptr;
  std::vector<SizeSetRun> runs;  // every check size set, then the reduced timing size (last)
  const TaskSpec& spec() const noexcept { return target.spec; }
};

// The first output that differs beyond the task's tolerance, as the GPU runner's feedback says it
// ("out: 3 of 1000 elements differ (...); first at [999]: expected 1.5, got nan"); empty when all agree.
std::string first_difference(const TaskSpec& task, const std::vector<Bytes>& actual, const std::vector<Bytes>& expected,
                             const std::vector<std::size_t>& counts);

// The steps (verify_task.cpp calls them in order).
void check_reference_against_oracle(VerifyContext& c);
void check_negatives(VerifyContext& c);
void check_variants(VerifyContext& c);
void check_degeneracy(VerifyContext& c);

}  // namespace leap::sandbox::verify

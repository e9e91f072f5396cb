// SPDX-License-Identifier: Apache-2.0
// `leap-sandbox tasks verify` for one task, on the CPU, without a GPU (docs/tasks.md#verification):
//   1. the reference declares no launch plan, and it and the oracle compile;
//   2. reference_vs_oracle: at every check size and a reduced copy of the timing size, the reference
//      on the CPU runtime under every schedule agrees with the oracle through the sandbox's own
//      comparison and the task's tolerance;
//   3. negatives: a zeros output, a copy of an input, a partial output each fail that comparison;
//   4. variants: the shipped sources get their verdicts (fast correct, wrong and lowprec wrong_answer
//      on the CPU runtime, broken a compile_error from NVRTC);
//   5. degeneracy: the largest output far above atol, outputs that change with the seed, and with
//      every input buffer and every float scalar.
// Each step is a check in the report; a failed step does not stop the ones that do not need it.
// Internal.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "verify/module_cache.hpp"
#include "verify/report.hpp"
#include "verify/verify_target.hpp"

namespace leap::sandbox::verify {

struct VerifyOptions {
  int random_schedules = 2;  // besides in order and reversed
  std::uint64_t seed = 1;    // of the trials' inputs and the random schedules
  bool negatives = true;
  bool variants = true;
  bool degeneracy = true;
};

TaskReport verify_task(const VerifyTarget& target, ModuleCache& cache, const VerifyOptions& options = {});

}  // namespace leap::sandbox::verify

// SPDX-License-Identifier: Apache-2.0
// A task's oracle (leap/oracle.hpp) run on one trial: sizes, scalars and inputs handed over in
// double, its outputs rounded to each buffer's dtype as a kernel would store them, so the sandbox's
// own comparison can hold the reference to them. Internal.
#pragma once

#include <string>
#include <vector>

#include "verify/module_cache.hpp"
#include "verify/trial.hpp"

namespace leap::sandbox::verify {

struct OracleRun {
  std::string failure;         // empty: ran; else the exception the oracle threw
  std::vector<Bytes> outputs;  // by parameter: out and inout buffers in their dtype; empty for others
  std::vector<std::vector<double>> values;  // the same in double, as the oracle wrote them
  bool ok() const noexcept { return failure.empty(); }
};

OracleRun run_oracle(ModuleCache::OracleEntry entry, const TaskSpec& task, const Trial& trial);

}  // namespace leap::sandbox::verify

// SPDX-License-Identifier: Apache-2.0
// Runs a program (the host compiler) with argv as given, no shell, and collects what it writes to
// stdout and stderr together, up to a cap.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace leap::cpu_runtime::detail {

struct ProcessResult {
  bool started = false;  // false: the program could not be run (output says why)
  int exit_code = -1;    // 128 + the signal when a signal ended it
  std::string output;
};

ProcessResult run_process(const std::vector<std::string>& argv, std::size_t output_cap = std::size_t{1} << 20);

}  // namespace leap::cpu_runtime::detail

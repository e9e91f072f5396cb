// SPDX-License-Identifier: Apache-2.0
// What `tasks verify` found for one task: each check by name, passed or not, and what it saw; as
// text (one line a check, the failures' details in full) and as JSON. Internal.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace leap::sandbox::verify {

struct CheckResult {
  std::string name;    // "reference_vs_oracle", "negative:zeros", "variant:fast", "degenerate:input:x", ...
  bool ok = false;
  std::string detail;  // what was checked and, on failure, the first difference: sizes, element, values
};

struct TaskReport {
  std::string task;
  std::string origin;  // "built-in" or the spec file
  std::vector<CheckResult> checks;
  double seconds = 0.0;      // wall time of the whole verification
  double cpu_seconds = 0.0;  // CPU time of this process (and its compiles) for it
  bool ok() const noexcept;
  void add(std::string name, bool ok, std::string detail);
};

// "PASS row_sum (12 checks, 1.4 s)" and, for each check, "  ok   NAME: DETAIL" / "  FAIL NAME: DETAIL";
// brief: only the failed checks' lines.
std::string to_text(const TaskReport& report, bool brief);
nlohmann::json to_json(const TaskReport& report);
TaskReport report_from_json(const nlohmann::json& j);

}  // namespace leap::sandbox::verify

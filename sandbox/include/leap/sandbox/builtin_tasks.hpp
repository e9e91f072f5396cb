// SPDX-License-Identifier: Apache-2.0
// The tasks shipped with the sandbox (sandbox/tasks/), embedded in the library at build time so an
// installed leap-sandbox needs no data directory. Each comes with candidate variants of known quality.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox {

struct TaskVariant {
  std::string name;    // "reference", "fast", "wrong", "broken", ...
  std::string expect;  // the verdict it should get: "correct", "wrong_answer", "compile_error", ...
  std::string source;
};

struct BuiltinTask {
  TaskSpec spec;
  std::vector<TaskVariant> variants;  // "reference" first, then as listed in the spec
  const TaskVariant* variant(std::string_view name) const noexcept;
};

// Parsed once on first use, sorted by name. Throws TaskError if an embedded spec is broken (a build bug).
const std::vector<BuiltinTask>& builtin_tasks();
const BuiltinTask* find_builtin_task(std::string_view name) noexcept;  // nullptr when unknown

}  // namespace leap::sandbox

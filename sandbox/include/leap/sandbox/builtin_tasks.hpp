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
  std::string oracle_source;          // the spec's oracle_file (leap/oracle.hpp), for `tasks verify`
  const TaskVariant* variant(std::string_view name) const noexcept;
};

// Parsed once on first use, sorted by name. A task whose files break a rule (validate,
// require_library_fields, a variant or oracle file missing) is left out, never the others: its
// error is in builtin_task_errors().
const std::vector<BuiltinTask>& builtin_tasks();
struct BuiltinTaskError {
  std::string task;     // the directory under sandbox/tasks
  std::string message;  // the TaskError's text: the task, the field, what to change
};
const std::vector<BuiltinTaskError>& builtin_task_errors();
const BuiltinTask* find_builtin_task(std::string_view name) noexcept;  // nullptr when unknown

}  // namespace leap::sandbox

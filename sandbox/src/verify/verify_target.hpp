// SPDX-License-Identifier: Apache-2.0
// What `tasks verify` checks: a task's spec, the variants shipped with it and its oracle, from a
// built-in task or from a user's task.json (whose files are read beside it). Internal.
#pragma once

#include <string>
#include <vector>

#include "leap/sandbox/builtin_tasks.hpp"
#include "leap/sandbox/task.hpp"

namespace leap::sandbox::verify {

struct VerifyTarget {
  TaskSpec spec;
  std::vector<TaskVariant> variants;  // "reference" first, then the listed ones
  std::string oracle_source;          // empty: the task has no oracle (a user's spec may lack one)
  std::string origin;                 // "built-in" or the spec file's path, for the report
};

VerifyTarget target_of(const BuiltinTask& task);

// Reads a task.json, its reference, variants and oracle_file beside it (confined_resolver). With
// builtin_rules, the rules of a built-in task apply too: every library field, an oracle, the
// directory's name equal to the task's. Throws TaskError naming the file and the field.
VerifyTarget load_target_file(const std::string& path, bool builtin_rules);

// A name as the CLI takes it: a spec file when it holds a '/' or ends in ".json" (load_target_file),
// else a built-in task. Throws TaskError: the file's error, "no built-in task 'NAME'", or why a
// built-in task of that name was left out of the library.
bool names_spec_file(const std::string& name) noexcept;
VerifyTarget find_target(const std::string& name, bool builtin_rules);

}  // namespace leap::sandbox::verify

// SPDX-License-Identifier: Apache-2.0
// What the task library records of a task beside its spec (docs/task-json.md#library-fields): its
// category and difficulty tier (what a curriculum or a DCP gate can read), the bytes it must move and
// the operations it must do (the timing floor and the speed-of-light figure use them), where its
// semantics come from, its train/holdout split, why its tolerance is what it is, and its oracle.
// Every built-in task carries all of them; in a user's spec each is optional.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace leap::sandbox {

struct TaskSpec;

inline constexpr std::array<std::string_view, 12> k_task_categories = {
    "activation", "loss",    "gemm",    "convolution", "attention", "reduction",
    "scan",       "norm",    "pooling", "softmax",     "inference", "elementwise"};
inline constexpr std::array<std::string_view, 2> k_task_origins = {"kernelbench-level1", "leap"};
inline constexpr std::array<std::string_view, 2> k_task_licences = {"MIT", "Apache-2.0"};
inline constexpr std::array<std::string_view, 2> k_task_splits = {"train", "holdout"};
inline constexpr int k_default_compile_cpu_seconds = 10;
inline constexpr int k_max_compile_cpu_seconds = 120;

struct TaskProvenance {
  std::string origin;     // "kernelbench-level1" (semantics only, no files copied) or "leap"
  std::string semantics;  // the formula followed, e.g. "torch.nn.functional.gelu(x, approximate='none')"
  std::string licence;    // "MIT" for KernelBench-derived semantics, "Apache-2.0" for leap's own
  bool operator==(const TaskProvenance&) const = default;
};

// Empty strings and 0 mean "not given".
struct TaskLibraryInfo {
  std::string category;  // one of k_task_categories
  int tier = 0;          // 1 one pass, 2 cooperation within a block or row, 3 tiling and data reuse
  std::string bytes;     // size expression: the minimal bytes moved (each input read, each output written once)
  std::string flops;     // size expression: floating-point operations of the plain algorithm (FMA = 2)
  std::optional<TaskProvenance> provenance;
  std::string split;             // "train" or "holdout"
  std::string tolerance_reason;  // one sentence: why the tolerance is what it is
  std::string oracle_file;       // the oracle's file beside task.json (leap/oracle.hpp)
  int compile_cpu_seconds = 0;   // the candidate compile's CPU limit; 0: k_default_compile_cpu_seconds
  bool operator==(const TaskLibraryInfo&) const = default;

  int compile_cpu_limit() const noexcept {
    return compile_cpu_seconds > 0 ? compile_cpu_seconds : k_default_compile_cpu_seconds;
  }
};

// The rules of a built-in task on top of validate(): every library field present. Throws TaskError
// naming the first missing field and what to write, e.g.
// task 'gelu': split: missing (a built-in task says "train" or "holdout")
void require_library_fields(const TaskSpec& task);

}  // namespace leap::sandbox

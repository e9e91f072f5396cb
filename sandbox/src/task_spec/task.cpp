// SPDX-License-Identifier: Apache-2.0
// A task's vocabulary and arithmetic: the names of its dtypes and roles, and what its size
// expressions give at one set of sizes (buffer lengths, launch dimensions). Reading task.json is in
// task_parse.cpp, reading the files it names in task_file.cpp, its checks in task_check.cpp, writing
// it back in task_json.cpp.
#include "leap/sandbox/task.hpp"

#include <optional>
#include <string_view>

#include "task_spec/size_expr.hpp"
#include "task_spec/task_spec_rules.hpp"

namespace leap::sandbox {

using detail::task_spec::k_dtypes;

std::string_view to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::float32: return "float32";
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::int32: return "int32";
    case DType::int8: return "int8";
  }
  return "unknown";
}

std::string_view to_string(Role role) noexcept {
  switch (role) {
    case Role::in: return "in";
    case Role::out: return "out";
    case Role::inout: return "inout";
  }
  return "unknown";
}

std::optional<DType> dtype_from_string(std::string_view name) noexcept {
  for (DType d : k_dtypes) {
    if (to_string(d) == name) return d;
  }
  return std::nullopt;
}

std::string_view to_string(GeneratorKind kind) noexcept {
  switch (kind) {
    case GeneratorKind::uniform: return "uniform";
    case GeneratorKind::normal: return "normal";
    case GeneratorKind::randint: return "randint";
    case GeneratorKind::zeros: return "zeros";
    case GeneratorKind::constant: return "constant";
    case GeneratorKind::arange: return "arange";
    case GeneratorKind::rademacher: return "rademacher";
    case GeneratorKind::student_t: return "student_t";
  }
  return "unknown";
}

std::optional<GeneratorKind> generator_kind_from_string(std::string_view name) noexcept {
  for (GeneratorKind k : detail::task_spec::k_generator_kinds) {
    if (to_string(k) == name) return k;
  }
  return std::nullopt;
}

std::size_t dtype_size(DType dtype) noexcept {
  if (dtype == DType::int8) return 1;
  return dtype == DType::float16 || dtype == DType::bfloat16 ? 2 : 4;
}

Generator generator_at(const Param& buffer, const Sizes& sizes) {
  Generator g = buffer.generator;
  auto resolve = [&](const std::string& expr, double& out, const char* which) {
    if (expr.empty()) return;
    try {
      out = static_cast<double>(eval_size_expr(expr, sizes));
    } catch (const std::invalid_argument& ex) {
      throw TaskError(buffer.name + ": randint " + which + " \"" + expr + "\": " + ex.what());
    }
  };
  resolve(g.low_expr, g.a, "low");
  resolve(g.high_expr, g.b, "high");
  g.low_expr.clear();
  g.high_expr.clear();
  return g;
}

std::size_t element_count(const Param& buffer, const Sizes& sizes) {
  std::int64_t n = 1;
  for (const std::string& e : buffer.shape) {
    std::int64_t d = 0;
    try {
      d = eval_size_expr(e, sizes);
    } catch (const std::invalid_argument& ex) {
      throw TaskError(buffer.name + ": " + ex.what());
    }
    if (d < 1)
      throw TaskError(buffer.name + ": shape dimension \"" + e + "\" is " + std::to_string(d) + ", not positive");
    if (n > (std::int64_t{1} << 40) / d) throw TaskError(buffer.name + ": too many elements");
    n *= d;
  }
  return static_cast<std::size_t>(n);
}

ResolvedLaunch resolve_launch(const TaskSpec& task, const Sizes& sizes) {
  ResolvedLaunch l;
  auto dim = [&](const std::string& e, const std::string& field, std::int64_t hi) {
    std::int64_t v = 0;
    try {
      v = eval_size_expr(e, sizes);
    } catch (const std::invalid_argument& ex) {
      throw TaskError(field + ": " + ex.what());
    }
    if (v < (field == "launch.shared_bytes" ? 0 : 1) || v > hi) {
      throw TaskError(field + ": \"" + e + "\" is " + std::to_string(v) + ", outside [1, " + std::to_string(hi) + "]");
    }
    return static_cast<unsigned>(v);
  };
  for (int k = 0; k < 3; ++k) {
    l.grid[k] = dim(task.launch.grid[k], "launch.grid[" + std::to_string(k) + "]", k_max_grid_dims[k]);
    l.block[k] = dim(task.launch.block[k], "launch.block[" + std::to_string(k) + "]", k_max_block_dims[k]);
  }
  if (static_cast<std::uint64_t>(l.block[0]) * l.block[1] * l.block[2] > k_max_threads_per_block) {
    throw TaskError("launch.block: more than " + std::to_string(k_max_threads_per_block) + " threads per block");
  }
  l.shared_bytes =
      dim(task.launch.shared_bytes, "launch.shared_bytes", static_cast<std::int64_t>(k_max_plan_shared_bytes));
  return l;
}

}  // namespace leap::sandbox

// SPDX-License-Identifier: Apache-2.0
// What task.json's parsing (task_parse.cpp), checking (task_check.cpp) and writing (task_json.cpp)
// share: the error that names task and field, how a refused value is shown, the dtypes in their
// order, and the shape of a task's names. Not installed.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox::detail::task_spec {

inline constexpr DType k_dtypes[] = {DType::float32, DType::float16, DType::bfloat16, DType::int32, DType::int8};
inline constexpr GeneratorKind k_generator_kinds[] = {
    GeneratorKind::uniform, GeneratorKind::normal, GeneratorKind::randint,    GeneratorKind::constant,
    GeneratorKind::zeros,   GeneratorKind::arange, GeneratorKind::rademacher, GeneratorKind::student_t};

// A task's own name, its entry, parameter and size names: short enough to stand in a table column
// and in every message that quotes them.
inline constexpr std::size_t k_max_task_name_length = 64;

// Throws TaskError "task 'NAME': FIELD: PROBLEM" ('?' for a task whose name is not known yet).
[[noreturn]] void fail(const std::string& task, const std::string& field, const std::string& problem);

// A JSON value as a message quotes it: compact, invalid UTF-8 replaced, at most 60 characters.
std::string shown(const nlohmann::json& v);

// [a-z0-9_]+ of at most k_max_task_name_length characters: a task's name is also a file and CLI name.
bool is_task_name(std::string_view s);

}  // namespace leap::sandbox::detail::task_spec

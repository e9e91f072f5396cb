// SPDX-License-Identifier: Apache-2.0
// The small integer language of task specs: shapes, launch dimensions and scalar values are written
// over named problem sizes, e.g. "ceil_div(n, 256)" or "rows * cols".
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "leap/sandbox/task.hpp"  // Sizes

namespace leap::sandbox {

// Grammar: expr := term (('+'|'-') term)*; term := unary (('*'|'/'|'%') unary)*;
// unary := '-' unary | primary; primary := integer | name | fn '(' expr (',' expr)* ')' | '(' expr ')'.
// Functions: ceil_div(a, b), min(a, b), max(a, b), pow2_ceil(a) (the next power of two >= a).
// Division truncates toward zero. Throws std::invalid_argument for a syntax error, an unknown name,
// division by zero, overflow, or an expression past the limits below, with the expression (or its
// length) and the reason in the message.
constexpr std::size_t k_max_size_expr_length = 4096;  // characters
constexpr int k_max_size_expr_depth = 64;             // nested parentheses, calls and unary minus signs
std::int64_t eval_size_expr(std::string_view expr, const Sizes& sizes);

// A size set as messages show it: "{cols=512, rows=3}".
std::string sizes_text(const Sizes& sizes);

}  // namespace leap::sandbox

// SPDX-License-Identifier: Apache-2.0
// Building the messages of leap's exceptions. Internal: not part of the API.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace leap::detail {

// Joins the parts with operator<< into one message: "leap::f: out.size() (3) != results.size() (4)".
template <class... Parts>
std::string concat(Parts&&... parts) {
  std::ostringstream stream;
  stream.precision(17);
  (stream << ... << std::forward<Parts>(parts));
  return stream.str();
}

template <class... Parts>
[[noreturn]] void throw_invalid_argument(Parts&&... parts) {
  throw std::invalid_argument(concat(std::forward<Parts>(parts)...));
}

// The common check of the batched functions: two spans that must be the same length.
inline void require_same_size(const char* function, const char* name_a, std::size_t size_a, const char* name_b,
                              std::size_t size_b) {
  if (size_a != size_b) {
    throw_invalid_argument("leap::", function, ": ", name_a, ".size() (", size_a, ") != ", name_b, ".size() (", size_b,
                           ")");
  }
}

// Calls value.validate() when the type has one: orders and gates may check their own settings (a NaN
// tolerance, t_min > t_max + 1), and user-written ones need not.
template <class T>
void validate_if_able(const T& value) {
  if constexpr (requires { value.validate(); }) value.validate();
}

}  // namespace leap::detail

// SPDX-License-Identifier: Apache-2.0
// The one test of a C identifier ([A-Za-z_][A-Za-z0-9_]*), behind macro names, task entries and
// parameters, size names, and the kernel and scratch names of a launch plan. What differs between
// those callers is only how long a name may be, so the limit is theirs to pass.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <string_view>

namespace leap::sandbox::detail {

// No limit of its own: for a name that another check already bounds.
inline constexpr std::size_t k_any_identifier_length = std::string_view::npos;

// True when `text` is a C identifier of at most `max_length` characters.
inline bool is_identifier(std::string_view text, std::size_t max_length) noexcept {
  if (text.empty() || text.size() > max_length || std::isdigit(static_cast<unsigned char>(text.front())) != 0)
    return false;
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; });
}

}  // namespace leap::sandbox::detail

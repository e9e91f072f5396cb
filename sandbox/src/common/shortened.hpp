// SPDX-License-Identifier: Apache-2.0
// Text quoted in an error message or a listing is cut to its start: the reason matters, not a page of
// a hostile expression or a long description. Each caller picks its own widths (what a table column or
// a message line holds), so they are parameters.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace leap::sandbox::detail {

// `text` itself when it has at most `max_length` characters; otherwise its first `kept_length`
// characters followed by "...". `kept_length` + 3 <= `max_length` keeps the result within the width.
inline std::string shortened(std::string_view text, std::size_t max_length, std::size_t kept_length) {
  if (text.size() <= max_length) return std::string(text);
  return std::string(text.substr(0, kept_length)) + "...";
}

}  // namespace leap::sandbox::detail

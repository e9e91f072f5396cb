// SPDX-License-Identifier: Apache-2.0
// What reading a launch plan (launch_plan_parse.cpp) and checking it (launch_plan_check.cpp) share:
// how long a plan's names may be, how candidate text is quoted, and how dimensions are written back.
// Not installed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace leap::sandbox::detail::launch_plan_text {

// A kernel or scratch name of a plan: well past any name a kernel is given, and short enough that a
// message quoting it stays one line.
inline constexpr std::size_t k_max_plan_name_length = 255;

// Candidate text quoted in a message: its start, with control and non-ASCII bytes as '?'.
std::string shown_text(std::string_view s);

// Dimensions as a directive writes them: "(256)", "(16, 16)"; trailing 1s left out.
std::string join(const std::string (&dims)[3]);

}  // namespace leap::sandbox::detail::launch_plan_text

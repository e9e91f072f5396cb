// SPDX-License-Identifier: Apache-2.0
#include "task_spec/launch_plan_text.hpp"

#include "common/shortened.hpp"

namespace leap::sandbox::detail::launch_plan_text {

std::string shown_text(std::string_view s) {
  std::string out = shortened(s, 80, 60);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return "\"" + out + "\"";
}

std::string join(const std::string (&dims)[3]) {
  int n = 3;
  while (n > 1 && dims[n - 1] == "1") --n;
  if (n == 1) return "(" + dims[0] + ")";
  std::string out = "(";
  for (int i = 0; i < n; ++i) out += (i > 0 ? ", " : "") + dims[i];
  return out + ")";
}

}  // namespace leap::sandbox::detail::launch_plan_text

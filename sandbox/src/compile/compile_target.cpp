// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/compile_target.hpp"

#include <algorithm>
#include <cctype>

#include "leap/sandbox/compiler.hpp"

namespace leap::sandbox {
namespace {

constexpr int k_first_arch_specific = 90;  // sm_90a: the first architecture-specific target

// "sm_90" -> 90; -1 for anything else (a suffixed or compute_ arch included).
int plain_sm_number(std::string_view arch) {
  if (!arch.starts_with("sm_") || arch.size() < 5 || arch.size() > 7) return -1;
  int n = 0;
  for (const char c : arch.substr(3)) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace

std::string device_compile_target(int cc_major, int cc_minor, const std::vector<int>& supported) {
  const int number = cc_major * 10 + cc_minor;
  const std::string plain = "sm_" + std::to_string(number);
  const bool listed = std::find(supported.begin(), supported.end(), number) != supported.end();
  return number >= k_first_arch_specific && listed ? plain + "a" : plain;
}

std::string device_compile_target(int cc_major, int cc_minor) {
  return device_compile_target(cc_major, cc_minor, supported_archs());
}

std::string arch_specific_advice(std::string_view log, std::string_view arch) {
  const int number = plain_sm_number(arch);
  if (number < k_first_arch_specific) return "";
  const std::string refusal = "not supported on .target '" + std::string(arch) + "'";
  const std::size_t at = log.find(refusal);
  if (at == std::string_view::npos) return "";
  // The instruction ptxas names, from "Instruction 'wgmma.fence' not supported ...".
  std::string instruction = "an instruction";
  const std::size_t close = log.rfind('\'', at);
  const std::size_t open =
      close == std::string_view::npos || close == 0 ? std::string_view::npos : log.rfind('\'', close - 1);
  if (open != std::string_view::npos && close - open > 1 && close - open < 64)
    instruction = "'" + std::string(log.substr(open + 1, close - open - 1)) + "'";
  const std::string specific = std::string(arch) + "a";
  return instruction + " exists only on the architecture-specific target " + specific + ", not on " +
         std::string(arch) + ": compile for " + specific +
         " (leap-sandbox does so by default on a device of compute capability " + std::to_string(number / 10) + "." +
         std::to_string(number % 10) + "; --arch " + specific + ")";
}

}  // namespace leap::sandbox

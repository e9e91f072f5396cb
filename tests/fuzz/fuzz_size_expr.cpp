// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the size-expression language. The only allowed failure is the documented
// std::invalid_argument; anything else (a crash, UB, another exception) is a finding.
#include "task_spec/size_expr.hpp"

#include <cstdint>
#include <limits>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const leap::sandbox::Sizes sizes{
      {"n", 1000}, {"rows", 7}, {"cols", 3}, {"big", std::numeric_limits<std::int64_t>::max()}, {"neg", -5}};
  try {
    (void)leap::sandbox::eval_size_expr(std::string_view(reinterpret_cast<const char*>(data), size), sizes);
  } catch (const std::invalid_argument&) {}
  return 0;
}

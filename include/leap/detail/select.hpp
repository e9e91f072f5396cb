// SPDX-License-Identifier: Apache-2.0
// condition ? yes : no for doubles, as a bit blend: no branch, whatever the compiler makes of a
// conditional. Both values are computed first, so choosing between a product and its operand costs no
// branch either (a ternary around a floating-point product stays a branch under GCC's default
// -ftrapping-math, which may not evaluate the product when the condition is false). The ranking's
// comparisons run on random outcomes, where such a branch mispredicts often. Internal.
#pragma once

#include <bit>
#include <cstdint>

namespace leap::detail {

constexpr double select(bool condition, double yes, double no) noexcept {
  const std::uint64_t mask = std::uint64_t{0} - static_cast<std::uint64_t>(condition);
  return std::bit_cast<double>((std::bit_cast<std::uint64_t>(yes) & mask) | (std::bit_cast<std::uint64_t>(no) & ~mask));
}

}  // namespace leap::detail

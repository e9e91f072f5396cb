// SPDX-License-Identifier: Apache-2.0
// splitmix64's finaliser: a bijection of 64-bit words that scrambles every input bit into every output
// bit. The rollout loop derives per-sample seeds with it; the CPU runtime its schedules' random picks
// and block permutations. Internal: not part of the API.
#pragma once

#include <cstdint>

namespace leap::detail {

constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace leap::detail

// SPDX-License-Identifier: Apache-2.0
// The random streams a trial's seed gives: splitmix64 to derive seeds, xoshiro256+ to fill buffers,
// and the salts that give each use of one seed a stream of its own. Internal.
#pragma once

#include <cstdint>

namespace leap::sandbox::detail {

// Salts that give a use of a seed its own random stream: without them, where special values land
// and the int32 poison pattern would be the very numbers the same seed draws for the input's
// values (generate). Their values matter only in differing from each other and from 0.
inline constexpr std::uint64_t k_special_places_stream = 0x5BEC1A1F00D5EEDULL;
inline constexpr std::uint64_t k_int_poison_stream = 0xD1B54A32D192ED03ULL;

inline std::uint64_t splitmix(std::uint64_t& s) noexcept {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// xoshiro256+: fast enough to fill hundreds of MB per evaluation.
struct Rng {
  std::uint64_t s[4];
  explicit Rng(std::uint64_t seed) noexcept {
    for (auto& w : s) w = splitmix(seed);
  }
  std::uint64_t next() noexcept {
    const std::uint64_t result = s[0] + s[3];
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
  }
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

}  // namespace leap::sandbox::detail

// SPDX-License-Identifier: Apache-2.0
// Sums over one group of a batch, for the baselines. Internal.
//
// A sum taken left to right is a chain of dependent additions: at G = 8 the chain, not memory, sets
// the pace of a whole batch. Groups of the usual sizes (a power of two, 4 to 16) are therefore summed
// in a fixed tree: even and odd positions in the two lanes of a 16-byte vector, each lane a balanced
// tree, then lane 0 + lane 1. The scalar path adds in exactly that order, so every compiler gives the
// same bits. Other sizes are summed left to right.
#pragma once

#include <cstddef>
#include <cstring>

#include "leap/detail/simd_lanes.hpp"

namespace leap::detail {

// Sum of values[0], values[stride], ... (Count of them, a power of two) as a balanced tree.
template <std::size_t Count>
double balanced_sum(const double* values, std::size_t stride) noexcept {
  if constexpr (Count == 1) {
    return values[0];
  } else {
    return balanced_sum<Count / 2>(values, stride) + balanced_sum<Count / 2>(values + stride * (Count / 2), stride);
  }
}

#if LEAP_DETAIL_SIMD_LANES
template <std::size_t Count>
lanes_f64 balanced_lane_sum(const lanes_f64* lanes) noexcept {
  if constexpr (Count == 1) {
    return lanes[0];
  } else {
    return balanced_lane_sum<Count / 2>(lanes) + balanced_lane_sum<Count / 2>(lanes + Count / 2);
  }
}
#endif

template <std::size_t N>
inline constexpr bool tree_summed = N >= 4 && N <= 16 && (N & (N - 1)) == 0;

// The sum of a fixed-size group in the tree order above.
template <std::size_t N>
requires tree_summed<N>
double group_sum(const double (&values)[N]) noexcept {
#if LEAP_DETAIL_SIMD_LANES
  lanes_f64 lanes[N / 2];
  std::memcpy(lanes, values, sizeof values);
  const lanes_f64 halves = balanced_lane_sum<N / 2>(lanes);
  return halves[0] + halves[1];
#else
  return balanced_sum<N / 2>(values, 2) + balanced_sum<N / 2>(values + 1, 2);
#endif
}

}  // namespace leap::detail

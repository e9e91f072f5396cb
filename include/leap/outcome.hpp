// SPDX-License-Identifier: Apache-2.0
// Outcome: the result of one trajectory, as the ranking sees it.
#pragma once

#include <cstdint>
#include <limits>

#include "leap/verdict.hpp"

namespace leap {

struct Outcome {
  int solved_turn = 0;                            // 1-based turn of the first correct kernel; 0 = never solved
  Verdict best_verdict = Verdict::compile_error;  // most advanced verdict any turn reached
  double speedup = std::numeric_limits<double>::quiet_NaN();  // reference time / candidate time; NaN = unknown
  std::uint32_t tokens = 0;                                   // completion tokens over all turns

  constexpr bool solved() const noexcept { return solved_turn > 0; }
};

// Speedups compare equal when both are unknown (NaN), so a JSON round trip compares equal.
constexpr bool same_speedup(double a, double b) noexcept { return a == b || (a != a && b != b); }

// Field-wise equality, with NaN speedups equal to each other.
constexpr bool operator==(const Outcome& a, const Outcome& b) noexcept {
  return a.solved_turn == b.solved_turn && a.best_verdict == b.best_verdict && same_speedup(a.speedup, b.speedup) &&
         a.tokens == b.tokens;
}

}  // namespace leap

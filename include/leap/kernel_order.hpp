// SPDX-License-Identifier: Apache-2.0
// KernelOrder: the order on outcomes that decides each match of the rank-based tournament.
#pragma once

#include <cmath>
#include <concepts>

#include "leap/detail/error.hpp"
#include "leap/outcome.hpp"

namespace leap {

// Does a beat b? The keys are tried in this order and the first decisive one wins:
//   1. solved (solved_turn > 0) beats unsolved                               always
//   2. both solved: the earlier solved_turn wins                             by_turn
//   3. both unsolved: wrong_answer > timeout = runtime_error > compile_error by_severity
//   4. both solved: the higher speedup wins, unless max <= (1 + tol) * min   speedup_tolerance >= 0
//   5. fewer completion tokens win, unless max <= (1 + tol) * min            token_tolerance >= 0
//      (only between solved outcomes while tokens_only_when_solved)
// A tolerance band makes ties non-transitive (1.00 ~ 1.04 ~ 1.08, yet 1.08 beats 1.00), so the
// relation is not a weak order in general; rank_advantages handles that exactly.
struct KernelOrder {
  bool by_turn = true;
  bool by_severity = false;
  double speedup_tolerance = 0.05;  // negative: key off. NaN or <= 0 speedup on either side: tie
  double token_tolerance = 0.0;     // negative: key off. Equal counts (0 too) always tie
  bool tokens_only_when_solved = true;

  // The order exactly as LEAP describes it: solved beats unsolved, earlier turn beats later.
  static constexpr KernelOrder turns_only() noexcept {
    KernelOrder order;
    order.by_turn = true;
    order.by_severity = false;
    order.speedup_tolerance = -1.0;
    order.token_tolerance = -1.0;
    order.tokens_only_when_solved = true;
    return order;
  }

  bool speedup_key_on() const noexcept { return speedup_tolerance >= 0.0; }
  bool token_key_on(bool both_solved) const noexcept {
    return token_tolerance >= 0.0 && (both_solved || !tokens_only_when_solved);
  }

  // Throws std::invalid_argument when a tolerance is NaN (which would make every match decisive).
  void validate() const {
    if (std::isnan(speedup_tolerance)) {
      detail::throw_invalid_argument("leap::KernelOrder: speedup_tolerance is NaN (use a negative value to turn the key off)");
    }
    if (std::isnan(token_tolerance)) {
      detail::throw_invalid_argument("leap::KernelOrder: token_tolerance is NaN (use a negative value to turn the key off)");
    }
  }

  // +1: a beats b, -1: b beats a, 0: tie. Antisymmetric: compare(a, b) == -compare(b, a).
  int compare(const Outcome& a, const Outcome& b) const {
    validate();
    return compare_unchecked(a, b);
  }

  // compare() without the tolerance check, for loops that called validate() once up front.
  int compare_unchecked(const Outcome& a, const Outcome& b) const noexcept {
    const bool a_solved = a.solved_turn > 0;
    const bool b_solved = b.solved_turn > 0;
    if (a_solved != b_solved) return a_solved ? 1 : -1;
    if (a_solved) {
      if (by_turn && a.solved_turn != b.solved_turn) return a.solved_turn < b.solved_turn ? 1 : -1;
      if (speedup_key_on()) {
        if (const int by_speed = compare_speedups(a.speedup, b.speedup, speedup_tolerance)) return by_speed;
      }
    } else if (by_severity) {
      const int rank_a = failure_severity_rank(a.best_verdict);
      const int rank_b = failure_severity_rank(b.best_verdict);
      if (rank_a != rank_b) return rank_a > rank_b ? 1 : -1;
    }
    if (token_key_on(a_solved)) return compare_tokens(a.tokens, b.tokens, token_tolerance);
    return 0;
  }

  // Higher speedup wins outside the band. Written as `higher > (1 + tol) * lower` so the fast ranking
  // path, which counts with the very same expression, agrees with this bit for bit.
  static int compare_speedups(double a, double b, double tolerance) noexcept {
    if (!(a > 0.0) || !(b > 0.0)) return 0;  // NaN, zero or negative: unknown, a tie
    if (a > (1.0 + tolerance) * b) return 1;
    if (b > (1.0 + tolerance) * a) return -1;
    return 0;
  }

  // Fewer tokens win outside the band.
  static int compare_tokens(std::uint32_t a, std::uint32_t b, double tolerance) noexcept {
    const double da = a;
    const double db = b;
    if (db > (1.0 + tolerance) * da) return 1;
    if (da > (1.0 + tolerance) * db) return -1;
    return 0;
  }
};

// What rank_advantages needs of an order: `int compare(a, b) const` with +1 / 0 / -1 for a beats b /
// tie / b beats a. Custom orders take the pairwise O(G^2) path; KernelOrder has a fast one.
template <class Order>
concept outcome_order = requires(const Order& order, const Outcome& a, const Outcome& b) {
  { order.compare(a, b) } -> std::convertible_to<int>;
};

}  // namespace leap

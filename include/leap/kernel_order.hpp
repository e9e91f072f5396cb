// SPDX-License-Identifier: Apache-2.0
// KernelOrder: the order on outcomes that decides each match of the rank-based tournament.
#pragma once

#include <cmath>
#include <concepts>

#include "leap/detail/error.hpp"
#include "leap/detail/select.hpp"
#include "leap/outcome.hpp"

namespace leap {

// Does a beat b? The keys are tried in this order and the first decisive one wins:
//   1. solved (solved_turn > 0) beats unsolved                               always
//   2. both solved: the earlier solved_turn wins                             by_turn
//   3. both unsolved: wrong_answer > timeout = runtime_error > compile_error by_severity
//   4. both solved: the higher speedup wins, unless max <= (1 + tol) * min   speedup_tolerance >= 0
//      (an unknown speedup, NaN, 0 or negative, loses to any known one; two unknown tie)
//   5. fewer completion tokens win, unless max <= (1 + tol) * min            token_tolerance >= 0
//      (only between solved outcomes while tokens_only_when_solved)
// KernelOrder{} is LEAP as published: keys 1 and 2 only. The presets below turn the others on.
//
// A match is worth 1 to the winner and -1 to the loser, except a match decided by key 2 (both
// solved, at different turns), which is worth turn_weight: w = 1 is LEAP as published, w = 0 makes
// such matches ties (with no further key on, any success then beats any failure and successes tie),
// values between weigh an earlier success against a later one by less than a success against a
// failure. A match decided by the turn stays decided by it: later keys are not consulted.
//
// An unknown speedup never pays: a kernel that could hide its speed (a timing skipped, a run below
// the physical floor) would otherwise tie with every known speed of its turn, the fastest included;
// ranked below them, hiding speed can only lose.
//
// A tolerance band makes ties non-transitive (1.00 ~ 1.04 ~ 1.08, yet 1.08 beats 1.00), so the
// relation is not a weak order in general; rank_advantages handles that exactly.
struct KernelOrder {
  bool by_turn = true;
  bool by_severity = false;
  double speedup_tolerance = -1.0;  // negative: key off. NaN or <= 0 speedup: unknown, loses to a known one
  double token_tolerance = -1.0;    // negative: key off. Equal counts (0 too) always tie
  bool tokens_only_when_solved = true;
  double turn_weight = 1.0;  // in [0, 1]: what a match decided by the turn is worth (see above)

  // The order exactly as LEAP describes it: solved beats unsolved, earlier turn beats later. The same
  // as KernelOrder{}; kept as a name that says so.
  static constexpr KernelOrder turns_only() noexcept { return KernelOrder{}; }

  // LEAP's order, then speed: between successes at the same turn the faster kernel wins unless the
  // two speedups lie within a factor 1 + tolerance of each other.
  static KernelOrder with_speedup(double tolerance = 0.05) {
    KernelOrder order;
    order.speedup_tolerance = require_tolerance("with_speedup", "tolerance", tolerance);
    return order;
  }

  // LEAP's order, then speed, then fewer completion tokens (between successes). With its defaults this
  // is the default order of earlier leap versions; a token tolerance of 0 makes any difference in length decisive.
  static KernelOrder with_speedup_and_tokens(double speedup_tolerance = 0.05, double token_tolerance = 0.0) {
    KernelOrder order;
    order.speedup_tolerance = require_tolerance("with_speedup_and_tokens", "speedup_tolerance", speedup_tolerance);
    order.token_tolerance = require_tolerance("with_speedup_and_tokens", "token_tolerance", token_tolerance);
    return order;
  }

  bool speedup_key_on() const noexcept { return speedup_tolerance >= 0.0; }
  bool token_key_on(bool both_solved) const noexcept {
    return token_tolerance >= 0.0 && (both_solved || !tokens_only_when_solved);
  }
  // Whether any match can be worth less than 1 (the fast paths then add a correction, see rank_kernels).
  bool turn_weighted() const noexcept { return by_turn && turn_weight != 1.0; }

  // Throws std::invalid_argument when a tolerance is NaN (which would make every match decisive) or
  // turn_weight lies outside [0, 1].
  void validate() const {
    if (std::isnan(speedup_tolerance)) {
      detail::throw_invalid_argument(
          "leap::KernelOrder: speedup_tolerance is NaN (use a negative value to turn the key off)");
    }
    if (std::isnan(token_tolerance)) {
      detail::throw_invalid_argument(
          "leap::KernelOrder: token_tolerance is NaN (use a negative value to turn the key off)");
    }
    if (!(turn_weight >= 0.0 && turn_weight <= 1.0)) {
      detail::throw_invalid_argument(
          "leap::KernelOrder: turn_weight (", turn_weight,
          ") is outside [0, 1] (1 = LEAP as published, 0 = successes at different turns tie)");
    }
  }

  // +1: a beats b, -1: b beats a, 0: tie; the sign of match(a, b). Antisymmetric.
  int compare(const Outcome& a, const Outcome& b) const {
    validate();
    return compare_unchecked(a, b);
  }

  // What the match is worth to a: +1 or -1, +-turn_weight when the turn decides it, 0 for a tie.
  // rank_advantages sums these; match(a, b) == -match(b, a).
  double match(const Outcome& a, const Outcome& b) const {
    validate();
    return match_unchecked(a, b);
  }

  // True when both are solved at different turns and by_turn is on: the matches turn_weight scales.
  bool decided_by_turn(const Outcome& a, const Outcome& b) const noexcept {
    return by_turn && a.solved_turn > 0 && b.solved_turn > 0 && a.solved_turn != b.solved_turn;
  }

  double match_unchecked(const Outcome& a, const Outcome& b) const noexcept {
    const int result = unweighted(a, b);
    return decided_by_turn(a, b) ? turn_weight * result : static_cast<double>(result);
  }

  // compare() without the checks, for loops that called validate() once up front.
  int compare_unchecked(const Outcome& a, const Outcome& b) const noexcept {
    if (decided_by_turn(a, b) && turn_weight == 0.0) return 0;
    return unweighted(a, b);
  }

  // The winner by the keys alone, as if every match were worth 1.
  int unweighted(const Outcome& a, const Outcome& b) const noexcept {
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

  // Higher speedup wins outside the band; an unknown one (NaN, zero or negative) loses to a known one,
  // and two unknown tie. Written as `higher > scaled_speedup(lower)` over known_speedup's values so
  // the fast ranking paths, which count with the very same expressions, agree with this bit for bit.
  // No branch on whether a speedup is known: the unknown case is folded into the values (0, below
  // every known one), and at most one of the two compares holds (factor >= 1, values >= 0).
  static int compare_speedups(double a, double b, double tolerance) noexcept {
    const double factor = 1.0 + tolerance;
    const double known_a = known_speedup(a);
    const double known_b = known_speedup(b);
    return static_cast<int>(known_a > scaled_speedup(known_b, factor)) -
           static_cast<int>(known_b > scaled_speedup(known_a, factor));
  }

  // A speedup as the key compares it: itself when known (> 0), else 0, below every known one.
  static constexpr double known_speedup(double speedup) noexcept { return detail::select(speedup > 0.0, speedup, 0.0); }

  // The top of a speedup's band, (1 + tol) * s, for a value known_speedup gave (or NaN, with which a
  // fast path marks the key off): an unknown 0 stays 0, which every known speedup exceeds and no
  // unknown one does, also where an infinite tolerance would make (1 + tol) * 0 NaN. A blend of the
  // product and the value, not a branch.
  static constexpr double scaled_speedup(double speedup, double factor) noexcept {
    return detail::select(speedup > 0.0, factor * speedup, speedup);
  }

  // Fewer tokens win outside the band.
  static int compare_tokens(std::uint32_t a, std::uint32_t b, double tolerance) noexcept {
    const double da = a;
    const double db = b;
    if (db > (1.0 + tolerance) * da) return 1;
    if (da > (1.0 + tolerance) * db) return -1;
    return 0;
  }

 private:
  static double require_tolerance(const char* preset, const char* name, double tolerance) {
    if (!(tolerance >= 0.0) || std::isinf(tolerance)) {
      detail::throw_invalid_argument("leap::KernelOrder::", preset, ": ", name, " (", tolerance,
                                     ") must be finite and >= 0 (0: only equal values tie; 0.05: within 5 % tie)");
    }
    return tolerance;
  }
};

// What rank_advantages needs of an order: `int compare(a, b) const` with +1 / 0 / -1 for a beats b /
// tie / b beats a. Custom orders take the pairwise O(G^2) path; KernelOrder has a fast one.
template <class Order>
concept outcome_order = requires(const Order& order, const Outcome& a, const Outcome& b) {
  { order.compare(a, b) } -> std::convertible_to<int>;
};

// An order whose matches may be worth less than 1 provides `double match(a, b) const` in [-1, 1]; the
// tournament then sums match() instead of compare()'s sign.
template <class Order>
concept weighted_outcome_order = outcome_order<Order> &&
    requires(const Order& order, const Outcome& a, const Outcome& b) {
  { order.match(a, b) } -> std::convertible_to<double>;
};

namespace detail {
// The value of one match for the tournament: match() where the order has it, else compare()'s sign.
template <class Order>
double match_value(const Order& order, const Outcome& a, const Outcome& b) {
  if constexpr (weighted_outcome_order<Order>) {
    return static_cast<double>(order.match(a, b));
  } else {
    const int result = static_cast<int>(order.compare(a, b));
    return static_cast<double>((result > 0) - (result < 0));
  }
}
}  // namespace detail

}  // namespace leap

// SPDX-License-Identifier: Apache-2.0
// Turn credit: spreading a trajectory's advantage over its turns.
//
// A property of LEAP's order worth knowing before reading a training curve: a successful repair can
// be pushed down. Under the published order a trajectory solved at turn k >= 2 beats every failure,
// beats every success at a later turn and loses to every success at an earlier turn, so its advantage
// is
//   (failures + w * later successes - w * earlier successes) / (G - 1)
// (w = KernelOrder::turn_weight, 1 as published), which is negative whenever its group holds more
// earlier successes than failures and later successes together. An advantage <= 0 goes to every turn
// below, the repairing turn included: the policy learns to avoid a fix that worked, because in that
// group the first try should have worked. In the toy study 77 % of LEAP's successful repairs got a
// negative advantage (examples/toy_policy, docs/toy-policy.md). StepMetrics::solved_later_negative counts it each
// step; turn_weight < 1 weakens it, and turn_weight = 0 (successes tie) removes it.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "leap/detail/error.hpp"

namespace leap {

namespace detail {

inline void validate_turn_credit(const char* function, const char* where, std::size_t index, double advantage,
                                 int num_turns, int solved_turn) {
  const auto at = [&] {
    return index == SIZE_MAX ? std::string() : std::string(where) + "[" + std::to_string(index) + "] ";
  };
  if (num_turns < 0) throw_invalid_argument("leap::", function, ": ", at(), "num_turns (", num_turns, ") is negative");
  if (solved_turn < 0) {
    throw_invalid_argument("leap::", function, ": ", at(), "solved_turn (", solved_turn,
                           ") is negative; use 0 for never solved");
  }
  if (solved_turn > num_turns) {
    throw_invalid_argument("leap::", function, ": ", at(), "solved_turn (", solved_turn, ") > num_turns (", num_turns,
                           ")");
  }
  if (!std::isfinite(advantage)) {
    throw_invalid_argument("leap::", function, ": ", at(), "advantage (", advantage, ") is not finite");
  }
}

inline void validate_gamma(const char* function, double gamma) {
  if (!(gamma >= 0.0 && gamma <= 1.0))
    throw_invalid_argument("leap::", function, ": gamma (", gamma, ") is outside [0, 1]");
}

// One trajectory's credit into out (out.size() == num_turns), arguments already checked.
inline void spread_over_turns(double advantage, int solved_turn, double gamma, std::span<double> out) noexcept {
  if (advantage > 0.0 && solved_turn > 0) {
    double credit = advantage;
    for (int turn = solved_turn; turn >= 1; --turn) {
      out[static_cast<std::size_t>(turn - 1)] = credit;
      credit *= gamma;
    }
    for (std::size_t turn = static_cast<std::size_t>(solved_turn); turn < out.size(); ++turn) out[turn] = 0.0;
  } else {
    for (double& value : out) value = advantage;
  }
}

}  // namespace detail

// One advantage per turn of a trajectory with num_turns turns:
//   advantage > 0 and solved at turn k (1-based): turn t <= k gets gamma^(k - t) * advantage, so the
//     solving turn gets it whole and the turns that led there get it discounted; turns after k
//     (the rollout loop stops a solved trajectory, so normally none) get 0;
//   advantage > 0 and never solved (solved_turn = 0; possible with the severity or token keys):
//     every turn gets the advantage, as there is no solving turn to discount from;
//   advantage <= 0: every turn gets the advantage.
// Throws std::invalid_argument for num_turns < 0, solved_turn < 0, solved_turn > num_turns, a
// non-finite advantage, or gamma outside [0, 1].
inline std::vector<double> turn_advantages(double advantage, int num_turns, int solved_turn, double gamma) {
  detail::validate_turn_credit("turn_advantages", "", SIZE_MAX, advantage, num_turns, solved_turn);
  detail::validate_gamma("turn_advantages", gamma);
  std::vector<double> per_turn(static_cast<std::size_t>(num_turns), 0.0);
  detail::spread_over_turns(advantage, solved_turn, gamma, per_turn);
  return per_turn;
}

// A whole batch, allocating nothing: trajectory i (advantages[i], num_turns[i], solved_turns[i]) gets
// its num_turns[i] values at out[offset_i ...], offset_i = num_turns[0] + ... + num_turns[i - 1],
// so out holds every turn of the batch in trajectory order and out.size() must be the total. Throws
// std::invalid_argument, naming the trajectory and before writing anything, for the cases above or
// for lengths that do not match.
inline void turn_advantages(std::span<const double> advantages, std::span<const int> num_turns,
                            std::span<const int> solved_turns, double gamma, std::span<double> out) {
  constexpr const char* function = "turn_advantages";
  detail::require_same_size(function, "num_turns", num_turns.size(), "advantages", advantages.size());
  detail::require_same_size(function, "solved_turns", solved_turns.size(), "advantages", advantages.size());
  detail::validate_gamma(function, gamma);
  std::size_t total = 0;
  for (std::size_t i = 0; i < advantages.size(); ++i) {
    detail::validate_turn_credit(function, "trajectory", i, advantages[i], num_turns[i], solved_turns[i]);
    total += static_cast<std::size_t>(num_turns[i]);
  }
  if (out.size() != total) {
    detail::throw_invalid_argument("leap::", function, ": out.size() (", out.size(),
                                   ") must equal the total number of turns (", total, ")");
  }
  std::size_t offset = 0;
  for (std::size_t i = 0; i < advantages.size(); ++i) {
    const auto turns = static_cast<std::size_t>(num_turns[i]);
    detail::spread_over_turns(advantages[i], solved_turns[i], gamma, out.subspan(offset, turns));
    offset += turns;
  }
}

}  // namespace leap

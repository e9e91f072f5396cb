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
// negative advantage (examples/toy_policy, README). StepMetrics::solved_later_negative counts it each
// step; turn_weight < 1 weakens it, and turn_weight = 0 (successes tie) removes it.
#pragma once

#include <cmath>
#include <vector>

#include "leap/detail/error.hpp"

namespace leap {

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
  if (num_turns < 0) detail::throw_invalid_argument("leap::turn_advantages: num_turns (", num_turns, ") is negative");
  if (solved_turn < 0) {
    detail::throw_invalid_argument("leap::turn_advantages: solved_turn (", solved_turn,
                                   ") is negative; use 0 for never solved");
  }
  if (solved_turn > num_turns) {
    detail::throw_invalid_argument("leap::turn_advantages: solved_turn (", solved_turn, ") > num_turns (",
                                   num_turns, ")");
  }
  if (!std::isfinite(advantage)) {
    detail::throw_invalid_argument("leap::turn_advantages: advantage (", advantage, ") is not finite");
  }
  if (!(gamma >= 0.0 && gamma <= 1.0)) {
    detail::throw_invalid_argument("leap::turn_advantages: gamma (", gamma, ") is outside [0, 1]");
  }
  std::vector<double> per_turn(static_cast<std::size_t>(num_turns), advantage);
  if (advantage > 0.0 && solved_turn > 0) {
    double credit = advantage;
    for (int turn = solved_turn; turn >= 1; --turn) {
      per_turn[static_cast<std::size_t>(turn - 1)] = credit;
      credit *= gamma;
    }
    for (int turn = solved_turn + 1; turn <= num_turns; ++turn) per_turn[static_cast<std::size_t>(turn - 1)] = 0.0;
  }
  return per_turn;
}

}  // namespace leap

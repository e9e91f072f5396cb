// SPDX-License-Identifier: Apache-2.0
// Ranks one sample group of eight trajectories and prints each one's advantage under LEAP's order
// (the default), under the speed-aware preset, with successes tied (turn_weight 0), and what GRPO's
// z-score would give the same group with a binary "solved" reward.
#include <cstdio>
#include <vector>

#include "leap/baselines.hpp"
#include "leap/rank_advantage.hpp"

int main() {
  using leap::Outcome;
  using leap::Verdict;
  // A group of G = 8 attempts at one task: solved at turn 1, 2 or 3, or never (with how far they got).
  const std::vector<Outcome> group = {
      {1, Verdict::correct, 2.10, 900},
      {1, Verdict::correct, 2.05, 1200},  // two fast turn-1 solutions
      {1, Verdict::correct, 0.80, 700},
      {2, Verdict::correct, 1.50, 1800},  // slower; a turn-2 fix
      {3, Verdict::correct, 1.00, 2600},
      {0, Verdict::wrong_answer, std::numeric_limits<double>::quiet_NaN(), 2400},
      {0, Verdict::compile_error, std::numeric_limits<double>::quiet_NaN(), 3000},
      {0, Verdict::runtime_error, std::numeric_limits<double>::quiet_NaN(), 2900},
  };
  const std::vector<double> rank = leap::rank_advantages(group);  // KernelOrder{}: LEAP as published
  const std::vector<double> speed = leap::rank_advantages(group, leap::KernelOrder::with_speedup(0.05));
  leap::KernelOrder tied;
  tied.turn_weight = 0.0;  // any success beats any failure; successes tie
  const std::vector<double> binary = leap::rank_advantages(group, tied);

  std::vector<double> solved(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) solved[i] = group[i].solved() ? 1.0 : 0.0;
  const std::vector<std::uint32_t> ids(group.size(), 0);
  std::vector<double> grpo(group.size());
  leap::grpo_advantages(solved, ids, grpo);

  std::printf("%-4s %-6s %-14s %8s %7s | %10s %10s %10s %10s\n", "i", "turn", "verdict", "speedup", "tokens", "leap",
              "speed 5%", "w = 0", "grpo");
  for (std::size_t i = 0; i < group.size(); ++i) {
    const Outcome& o = group[i];
    std::printf("%-4zu %-6d %-14s %8.2f %7u | %+10.3f %+10.3f %+10.3f %+10.3f\n", i, o.solved_turn,
                std::string(leap::to_string(o.best_verdict)).c_str(), o.speedup, o.tokens, rank[i], speed[i], binary[i],
                grpo[i]);
  }
  std::printf(
      "\nleap: KernelOrder{} (an earlier success beats a later one, any success beats a failure);\n"
      "speed 5%%: KernelOrder::with_speedup(0.05); w = 0: turn_weight 0. Each column sums to 0.\n");
  return 0;
}

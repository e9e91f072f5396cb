// SPDX-License-Identifier: Apache-2.0
// Ranks one sample group of eight trajectories and prints each one's advantage under LEAP's order,
// next to what GRPO's z-score would give the same group with a binary "solved" reward.
#include <cstdio>
#include <vector>

#include "leap/baselines.hpp"
#include "leap/rank_advantage.hpp"

int main() {
  using leap::Outcome;
  using leap::Verdict;
  // A group of G = 8 attempts at one task: solved at turn 1, 2 or 3, or never (with how far they got).
  const std::vector<Outcome> group = {
      {1, Verdict::correct, 2.10, 900},       {1, Verdict::correct, 2.05, 1200},  // two fast turn-1 solutions
      {1, Verdict::correct, 0.80, 700},       {2, Verdict::correct, 1.50, 1800},  // slower; a turn-2 fix
      {3, Verdict::correct, 1.00, 2600},      {0, Verdict::wrong_answer, std::numeric_limits<double>::quiet_NaN(), 2400},
      {0, Verdict::compile_error, std::numeric_limits<double>::quiet_NaN(), 3000},
      {0, Verdict::runtime_error, std::numeric_limits<double>::quiet_NaN(), 2900},
  };
  const std::vector<double> rank = leap::rank_advantages(group);
  const std::vector<double> turns_only = leap::rank_advantages(group, leap::KernelOrder::turns_only());

  std::vector<double> solved(group.size());
  for (std::size_t i = 0; i < group.size(); ++i) solved[i] = group[i].solved() ? 1.0 : 0.0;
  const std::vector<std::uint32_t> ids(group.size(), 0);
  std::vector<double> grpo(group.size());
  leap::grpo_advantages(solved, ids, grpo);

  std::printf("%-4s %-6s %-14s %8s %7s | %10s %10s %10s\n", "i", "turn", "verdict", "speedup", "tokens", "leap",
              "turns-only", "grpo");
  for (std::size_t i = 0; i < group.size(); ++i) {
    const Outcome& o = group[i];
    std::printf("%-4zu %-6d %-14s %8.2f %7u | %+10.3f %+10.3f %+10.3f\n", i, o.solved_turn,
                std::string(leap::to_string(o.best_verdict)).c_str(), o.speedup, o.tokens, rank[i], turns_only[i],
                grpo[i]);
  }
  std::printf("\nleap: default KernelOrder (turn, then speedup within 5%%, then fewer tokens); advantages sum to 0.\n");
  return 0;
}

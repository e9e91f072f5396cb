// SPDX-License-Identifier: Apache-2.0
// StepMetrics: what one rollout step did and spent. leap/metrics_json.hpp writes it as a JSON line.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "leap/gate.hpp"

namespace leap {

struct StepMetrics {
  std::uint64_t step = 0;
  int tasks = 0;
  int group_size = 0;
  int max_turns = 0;
  int trajectories = 0;
  // accuracy_at_turn[t - 1] = Acc@t: the fraction of the step's judged (not masked) trajectories solved at
  // or before turn t, for t = 1..max_turns (pruned trajectories keep their turn-1 result at every t).
  std::vector<double> accuracy_at_turn;
  std::array<int, all_expansions.size()> groups_by_expansion{};  // indexed by Expansion
  std::array<int, gate_reason_count> groups_by_reason{};         // indexed by GateReason
  std::int64_t evaluations = 0;                                  // policy + environment calls, all turns
  std::vector<std::int64_t> evaluations_per_turn;                // [t - 1], t = 1..max_turns
  std::int64_t policy_errors = 0;  // evaluations whose policy threw (recorded as runtime_error)
  // Environment failures, never the candidate's (see rollout.hpp): environment calls that gave no verdict
  // (threw, or said environment_failure), every attempt counted; the calls made again after one; and the
  // trajectories masked because no attempt gave a verdict (left out of the gate's counts and the rank,
  // advantage 0, their samples masked). environment_errors = environment_retries + masked_trajectories.
  std::int64_t environment_errors = 0;
  std::int64_t environment_retries = 0;
  int masked_trajectories = 0;
  std::uint64_t completion_tokens = 0;  // tokens the policy generated, all turns
  std::uint64_t feedback_tokens = 0;    // tokens of feedback the environment reported
  // The scale of the training signal: root mean square of the training samples' advantages (one
  // per turn, after turn credit; masked samples left out). Compare it across estimators before sharing
  // a learning rate.
  double advantage_rms = 0.0;
  // Trajectories solved at turn 2 or later (successful repairs), and how many of them got a negative
  // advantage (under LEAP's order: when their group had more earlier successes than failures; see
  // turn_credit.hpp). A negative advantage pushes every turn of the repair down.
  int solved_later = 0;
  int solved_later_negative = 0;
  double wall_seconds = 0.0;  // the only field that differs between identical runs

  int groups(Expansion expansion) const noexcept { return groups_by_expansion[static_cast<std::size_t>(expansion)]; }
  int groups(GateReason reason) const noexcept { return groups_by_reason[static_cast<std::size_t>(reason)]; }
  // solved_later_negative / solved_later, 0 when nothing was solved later.
  double solved_later_negative_share() const noexcept {
    return solved_later > 0 ? static_cast<double>(solved_later_negative) / solved_later : 0.0;
  }
  double accuracy_at(int turn) const noexcept {
    if (turn < 1 || static_cast<std::size_t>(turn) > accuracy_at_turn.size()) return 0.0;
    return accuracy_at_turn[static_cast<std::size_t>(turn - 1)];
  }

  void count(const GateDecision& decision) noexcept {
    ++groups_by_expansion[static_cast<std::size_t>(decision.expansion)];
    ++groups_by_reason[static_cast<std::size_t>(decision.reason)];
  }

  friend bool operator==(const StepMetrics&, const StepMetrics&) = default;
};

}  // namespace leap

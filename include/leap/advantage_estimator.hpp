// SPDX-License-Identifier: Apache-2.0
// Advantage estimators: how the rollout loop turns a step's outcomes into one advantage per trajectory.
// An estimator provides
//   void compute(std::span<const Outcome> outcomes, std::span<const std::uint32_t> group_ids,
//                std::span<double> out) const
// The loop then spreads each trajectory's advantage over its turns (turn_advantages). RankAdvantage is
// LEAP's; GrpoAdvantage and RlooAdvantage run the baselines through the same loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "leap/advantage_normalization.hpp"
#include "leap/baselines.hpp"
#include "leap/kernel_order.hpp"
#include "leap/outcome.hpp"
#include "leap/rank_advantage.hpp"

namespace leap {

template <class Estimator>
concept advantage_estimator = requires(const Estimator& estimator, std::span<const Outcome> outcomes,
                                       std::span<const std::uint32_t> ids, std::span<double> out) {
  estimator.compute(outcomes, ids, out);
};

// LEAP's rank-based advantage under an order on outcomes: RankAdvantage<>{} is LEAP as published.
// normalization rescales the step's advantages afterwards (see advantage_normalization.hpp), for
// learning rates tuned on GRPO's scale; none by default.
template <outcome_order Order = KernelOrder>
struct RankAdvantage {
  Order order{};
  AdvantageNormalization normalization = AdvantageNormalization::none;
  double epsilon = 1e-6;  // added to the std or RMS before dividing
  void compute(std::span<const Outcome> outcomes, std::span<const std::uint32_t> group_ids,
               std::span<double> out) const {
    rank_advantages(outcomes, group_ids, out, order);
    normalize_advantages(out, group_ids, normalization, epsilon);
  }
};

// 1 for a solved trajectory, 0 otherwise: the usual verifiable reward of GRPO baselines.
struct BinaryReward {
  double operator()(const Outcome& outcome) const noexcept { return outcome.solved() ? 1.0 : 0.0; }
};

namespace detail {
template <class Reward>
std::vector<double> rewards_of(const Reward& reward, std::span<const Outcome> outcomes) {
  static_assert(std::is_invocable_r_v<double, const Reward&, const Outcome&>,
                "leap: a reward must be callable as `double reward(const leap::Outcome&) const`");
  std::vector<double> rewards(outcomes.size());
  for (std::size_t i = 0; i < outcomes.size(); ++i) rewards[i] = reward(outcomes[i]);
  return rewards;
}
}  // namespace detail

// GRPO (or Dr.GRPO with options.scale_by_std = false) on a scalar reward of each outcome. With
// NeverExpand this is single-turn GRPO; with AlwaysExpand, unpruned multi-turn GRPO.
template <class Reward = BinaryReward>
struct GrpoAdvantage {
  Reward reward{};
  GrpoOptions options{};
  void compute(std::span<const Outcome> outcomes, std::span<const std::uint32_t> group_ids,
               std::span<double> out) const {
    const std::vector<double> rewards = detail::rewards_of(reward, outcomes);
    grpo_advantages(rewards, group_ids, out, options);
  }
};

// RLOO on a scalar reward of each outcome.
template <class Reward = BinaryReward>
struct RlooAdvantage {
  Reward reward{};
  void compute(std::span<const Outcome> outcomes, std::span<const std::uint32_t> group_ids,
               std::span<double> out) const {
    const std::vector<double> rewards = detail::rewards_of(reward, outcomes);
    rloo_advantages(rewards, group_ids, out);
  }
};

}  // namespace leap

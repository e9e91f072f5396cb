// SPDX-License-Identifier: Apache-2.0
// Reward baselines of the critic-free family, for comparison with the rank-based advantage and as a
// fallback: GRPO's z-score, Dr.GRPO's centring, and RLOO's leave-one-out mean. All batched over
// group ids like rank_advantages; a group of one has no baseline and gets 0.
//
// How they match the common open trainers:
//   grpo_advantages      (r - mean) / (std + epsilon), std unbiased (n - 1), as TRL's GRPOTrainer and
//                        verl's GRPO estimator compute it. TRL's epsilon is 1e-4, verl's 1e-6 (ours).
//                        Where they differ: verl gives a lone sample its raw reward (mean 0, std 1)
//                        and TRL divides by a NaN std; leap gives 0.
//   scale_by_std = false Dr.GRPO: r - mean, no division (the length and std biases removed).
//   rloo_advantages      r_i - mean of the other G - 1 rewards = G / (G - 1) * (r_i - mean), as in
//                        RLOO (Ahmadian et al.) and TRL's RLOOTrainer.
// Sums and means are taken in double, also for float rewards; groups of 4, 8 and 16 are summed in a
// fixed tree order (detail/group_sums.hpp), others left to right. Rewards must be finite: an error
// names the first that is not. Results may have been written to out by then, unless out overlaps
// rewards (in place), which are then checked before anything is written.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

#include "leap/advantage_workspace.hpp"
#include "leap/detail/error.hpp"
#include "leap/detail/group_sums.hpp"
#include "leap/detail/group_index.hpp"

namespace leap {

struct GrpoOptions {
  double epsilon = 1e-6;     // added to the std before dividing
  bool scale_by_std = true;  // false: Dr.GRPO, r - mean
};

namespace detail {

template <class Real>
void validate_rewards(const char* function, std::span<const Real> rewards) {
  // First a branch-free probe (x * 0 is 0 exactly when x is finite, NaN otherwise), in four
  // independent sums so that it runs at memory speed; the search for the culprit only on failure.
  Real probe[4] = {};
  const std::size_t n = rewards.size();
  std::size_t at = 0;
  for (; at + 4 <= n; at += 4) {
    for (std::size_t k = 0; k < 4; ++k) probe[k] += rewards[at + k] * Real{0};
  }
  for (; at < n; ++at) probe[0] += rewards[at] * Real{0};
  if (probe[0] + probe[1] + probe[2] + probe[3] == Real{0}) return;
  for (std::size_t i = 0; i < rewards.size(); ++i) {
    if (!std::isfinite(rewards[i])) {
      throw_invalid_argument("leap::", function, ": rewards[", i, "] (", rewards[i], ") is not finite");
    }
  }
}

// Sum of squared deviations from the mean; fixed-size groups in group_sum's tree order.
template <class Group>
double squared_deviations(Group group, double mean) noexcept {
  if constexpr (Group::extent != std::dynamic_extent) {
    double squares[Group::extent];
    for (std::size_t i = 0; i < Group::extent; ++i) {
      const double deviation = static_cast<double>(group[i]) - mean;
      squares[i] = deviation * deviation;
    }
    return group_sum(squares);
  } else {
    double sum = 0.0;
    for (const auto r : group) sum += (static_cast<double>(r) - mean) * (static_cast<double>(r) - mean);
    return sum;
  }
}

// Runs per_group(values, group_out, sum of values) over every group of two or more; a group of one gets 0.
// The usual group sizes come as std::span<const double, N> (their loops unrolled and vectorised, the
// sums in group_sum's tree), others as the caller's std::span<const Real>.
//
// Rewards are validated in the same pass: each group's sum times 0 is 0 exactly when the sum is
// finite, so one probe covers the batch, and the search that names the culprit runs only when it
// fails. That saves a pass over the rewards, but writes results before the error: where out overlaps
// rewards (normalising in place) the rewards are validated first, so an error loses none of them.
template <class Real, class PerGroup>
void batched_baseline(const char* function, std::span<const Real> rewards, std::span<const std::uint32_t> group_ids,
                      std::span<Real> out, AdvantageWorkspace& workspace, PerGroup&& per_group) {
  require_same_size(function, "group_ids", group_ids.size(), "rewards", rewards.size());
  require_same_size(function, "out", out.size(), "rewards", rewards.size());
  const bool in_place = spans_overlap(rewards, std::span<const Real>(out));
  if (in_place) validate_rewards(function, rewards);
  WorkspaceAccess access(workspace, function);
  double probe = 0.0;
  const auto fixed_size = [&]<std::size_t N>(std::span<const Real> group, std::span<Real> group_out) {
    double values[N];
    for (std::size_t i = 0; i < N; ++i) values[i] = static_cast<double>(group[i]);
    const double sum = group_sum(values);
    probe += sum * 0.0;
    per_group(std::span<const double, N>(values), group_out, sum);
  };
  const auto any_size = [&](std::span<const Real> group, std::span<Real> group_out) {
    switch (group.size()) {
      case 0: return;
      case 1:
        probe += static_cast<double>(group[0]) * 0.0;
        group_out[0] = Real{0};
        return;
      case 4: return fixed_size.template operator()<4>(group, group_out);
      case 8: return fixed_size.template operator()<8>(group, group_out);
      case 16: return fixed_size.template operator()<16>(group, group_out);
      default: {
        double sum = 0.0;
        for (Real r : group) sum += static_cast<double>(r);
        probe += sum * 0.0;
        per_group(group, group_out, sum);
      }
    }
  };
  // Trainers' groups have one size: the loop is compiled for it (small enough to inline whole), with
  // any_size for the exceptions.
  const auto groups_of = [&]<std::size_t N>() {
    for_each_group(group_ids, rewards, out, access.batch(),
                   [&](std::span<const Real> group, std::span<Real> group_out) {
                     if (group.size() == N) [[likely]] {
                       fixed_size.template operator()<N>(group, group_out);
                     } else {
                       any_size(group, group_out);
                     }
                   });
  };
  switch (group_ids.empty() ? 0 : run_end(group_ids, 0, 0)) {
    case 4: groups_of.template operator()<4>(); break;
    case 8: groups_of.template operator()<8>(); break;
    case 16: groups_of.template operator()<16>(); break;
    default: for_each_group(group_ids, rewards, out, access.batch(), any_size);
  }
  // Throws naming the first non-finite reward. A batch of finite rewards whose sum overflowed passes,
  // as it did before the probe: its results are what the formulas give.
  if (probe != 0.0 && !in_place) validate_rewards(function, rewards);
}

template <class Real>
void grpo(std::span<const Real> rewards, std::span<const std::uint32_t> group_ids, std::span<Real> out,
          GrpoOptions options, AdvantageWorkspace& workspace) {
  if (!(options.epsilon >= 0.0) || !std::isfinite(options.epsilon)) {
    throw_invalid_argument("leap::grpo_advantages: options.epsilon (", options.epsilon, ") must be finite and >= 0");
  }
  batched_baseline("grpo_advantages", rewards, group_ids, out, workspace,
                   [&](auto group, std::span<Real> group_out, double sum) {
                     const double mean = sum / static_cast<double>(group.size());
                     double scale = 1.0;
                     if (options.scale_by_std) {
                       const double squares = squared_deviations(group, mean);
                       const double std_dev = std::sqrt(squares / static_cast<double>(group.size() - 1));
                       scale = 1.0 / (std_dev + options.epsilon);
                       if (!std::isfinite(scale)) scale = 0.0;  // all equal and epsilon 0: every r - mean is 0
                     }
                     for (std::size_t i = 0; i < group.size(); ++i) {
                       group_out[i] = static_cast<Real>((static_cast<double>(group[i]) - mean) * scale);
                     }
                   });
}

template <class Real>
void rloo(std::span<const Real> rewards, std::span<const std::uint32_t> group_ids, std::span<Real> out,
          AdvantageWorkspace& workspace) {
  batched_baseline("rloo_advantages", rewards, group_ids, out, workspace,
                   [&](auto group, std::span<Real> group_out, double sum) {
                     const double n = static_cast<double>(group.size());
                     for (std::size_t i = 0; i < group.size(); ++i) {
                       const double r = static_cast<double>(group[i]);
                       group_out[i] = static_cast<Real>(r - (sum - r) / (n - 1.0));
                     }
                   });
}

}  // namespace detail

// GRPO z-score (or Dr.GRPO with options.scale_by_std = false), batched over group ids. Works in the
// calling thread's AdvantageWorkspace (nothing allocated after the first call of a given size), or in
// the one passed.
inline void grpo_advantages(std::span<const double> rewards, std::span<const std::uint32_t> group_ids,
                            std::span<double> out, GrpoOptions options = {}) {
  detail::with_thread_workspace(
      [&](AdvantageWorkspace& ws) { detail::grpo<double>(rewards, group_ids, out, options, ws); });
}
inline void grpo_advantages(std::span<const float> rewards, std::span<const std::uint32_t> group_ids,
                            std::span<float> out, GrpoOptions options = {}) {
  detail::with_thread_workspace(
      [&](AdvantageWorkspace& ws) { detail::grpo<float>(rewards, group_ids, out, options, ws); });
}
inline void grpo_advantages(std::span<const double> rewards, std::span<const std::uint32_t> group_ids,
                            std::span<double> out, GrpoOptions options, AdvantageWorkspace& workspace) {
  detail::grpo<double>(rewards, group_ids, out, options, workspace);
}
inline void grpo_advantages(std::span<const float> rewards, std::span<const std::uint32_t> group_ids,
                            std::span<float> out, GrpoOptions options, AdvantageWorkspace& workspace) {
  detail::grpo<float>(rewards, group_ids, out, options, workspace);
}

// RLOO: each reward minus the mean of the rest of its group, batched over group ids; workspaces as
// for grpo_advantages.
inline void rloo_advantages(std::span<const double> rewards, std::span<const std::uint32_t> group_ids,
                            std::span<double> out) {
  detail::with_thread_workspace([&](AdvantageWorkspace& ws) { detail::rloo<double>(rewards, group_ids, out, ws); });
}
inline void rloo_advantages(std::span<const float> rewards, std::span<const std::uint32_t> group_ids,
                            std::span<float> out) {
  detail::with_thread_workspace([&](AdvantageWorkspace& ws) { detail::rloo<float>(rewards, group_ids, out, ws); });
}
inline void rloo_advantages(std::span<const double> rewards, std::span<const std::uint32_t> group_ids,
                            std::span<double> out, AdvantageWorkspace& workspace) {
  detail::rloo<double>(rewards, group_ids, out, workspace);
}
inline void rloo_advantages(std::span<const float> rewards, std::span<const std::uint32_t> group_ids,
                            std::span<float> out, AdvantageWorkspace& workspace) {
  detail::rloo<float>(rewards, group_ids, out, workspace);
}

}  // namespace leap

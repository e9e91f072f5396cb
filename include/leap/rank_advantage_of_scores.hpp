// SPDX-License-Identifier: Apache-2.0
// The rank-based advantage over scalar scores, for trainers that pass one number per sample.
//
// Within a group every pair plays one match: the higher score wins, and scores within `tolerance` of
// each other tie (a beats b exactly when a - b > tolerance, computed in double). The advantage is the
// Copeland score (wins - losses) / (G - 1), as for rank_advantages over outcomes; a group of one gets 0.
//
// The published LEAP order through a scalar reward: score a success at turn t as max_turns + 1 - t
// and a failure as 0. Then every match has the outcome KernelOrder::turns_only() gives it, and the
// advantages equal rank_advantages(..., KernelOrder::turns_only()) bit for bit (tests check that).
// A tolerance turns near-equal scores into ties, e.g. a speedup folded into the reward.
//
// Which path computes it (results are identical; tests hold both to the oracle):
//   G <= detail::score_pairwise_max   each pair once, O(G^2)
//   larger G                          sorted scores, O(G log G): a member's wins are a prefix of the
//                                     sorted scores and its losses a suffix, found by binary search
//                                     with the very expression a - b > tolerance, which is monotone
//                                     in b also in floating point, so the counts are exact
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "leap/advantage_workspace.hpp"
#include "leap/detail/error.hpp"
#include "leap/detail/group_index.hpp"

namespace leap {
namespace detail {

// Up to this group size the pairwise loop beats sorting (measured with bench_advantages:
// BM_scores_pairwise against BM_scores_sorted: 19 against 13 M scores/s at G = 64, 4 against 12 at 128).
inline constexpr std::size_t score_pairwise_max = 64;

// The match: +1 a beats b, -1 b beats a, 0 tie. Both paths count with exactly this expression.
inline int compare_scores(double a, double b, double tolerance) noexcept {
  return static_cast<int>(a - b > tolerance) - static_cast<int>(b - a > tolerance);
}

template <class Real>
void validate_scores(const char* function, std::span<const Real> scores, double tolerance) {
  if (!(tolerance >= 0.0)) {
    throw_invalid_argument("leap::", function, ": tolerance (", tolerance,
                           ") must be >= 0 (0 = only equal scores tie)");
  }
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (!std::isfinite(scores[i])) {
      throw_invalid_argument("leap::", function, ": scores[", i, "] (", scores[i], ") is not finite");
    }
  }
}

// Each pair once (a match's result for b is minus a's, as compare_scores is antisymmetric), the
// running scores kept in out itself: they are small integers, exact in float and double alike.
template <class Real>
void score_group_pairwise(std::span<const Real> group, double tolerance, std::span<Real> out) {
  const std::size_t n = group.size();
  std::fill(out.begin(), out.end(), Real{0});
  for (std::size_t i = 0; i < n; ++i) {
    const double a = static_cast<double>(group[i]);
    int score_a = 0;
    for (std::size_t j = i + 1; j < n; ++j) {
      const int result = compare_scores(a, static_cast<double>(group[j]), tolerance);
      score_a += result;
      out[j] -= static_cast<Real>(result);
    }
    out[i] += static_cast<Real>(score_a);
  }
  const double opponents = static_cast<double>(n - 1);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Real>(static_cast<double>(out[i]) / opponents);
}

template <class Real>
void score_group_sorted(std::span<const Real> group, double tolerance, std::vector<double>& sorted,
                        std::span<Real> out) {
  const std::size_t n = group.size();
  sorted.assign(group.begin(), group.end());
  std::sort(sorted.begin(), sorted.end());
  const double opponents = static_cast<double>(n - 1);
  for (std::size_t i = 0; i < n; ++i) {
    const double a = static_cast<double>(group[i]);
    // a - b > tolerance holds on a prefix of the ascending scores, b - a > tolerance on a suffix.
    const auto beaten_end =
        std::partition_point(sorted.begin(), sorted.end(), [&](double b) { return a - b > tolerance; });
    const auto winners_begin =
        std::partition_point(beaten_end, sorted.end(), [&](double b) { return !(b - a > tolerance); });
    const auto wins = beaten_end - sorted.begin();
    const auto losses = sorted.end() - winners_begin;
    out[i] = static_cast<Real>(static_cast<double>(wins - losses) / opponents);
  }
}

template <class Real>
void rank_scores_batched(std::span<const Real> scores, std::span<const std::uint32_t> group_ids, std::span<Real> out,
                         double tolerance, AdvantageWorkspace& workspace) {
  const char* function = "rank_advantages_of_scores";
  require_same_size(function, "group_ids", group_ids.size(), "scores", scores.size());
  require_same_size(function, "out", out.size(), "scores", scores.size());
  validate_scores(function, scores, tolerance);
  // out may be the scores' own buffer (in place): then the scores are read from a copy.
  std::vector<Real> scores_copy;
  const auto out_begin = reinterpret_cast<std::uintptr_t>(out.data());
  const auto scores_begin = reinterpret_cast<std::uintptr_t>(scores.data());
  if (!scores.empty() && out_begin < scores_begin + scores.size_bytes() &&
      scores_begin < out_begin + out.size_bytes()) {
    scores_copy.assign(scores.begin(), scores.end());
    scores = scores_copy;
  }
  WorkspaceAccess access(workspace, function);
  std::vector<double>& sorted = access.sorted();
  for_each_group(group_ids, scores, out, access.batch(), [&](std::span<const Real> group, std::span<Real> group_out) {
    if (group.size() < 2) {
      std::fill(group_out.begin(), group_out.end(), Real{0});
    } else if (group.size() <= score_pairwise_max) {
      score_group_pairwise(group, tolerance, group_out);
    } else {
      score_group_sorted(group, tolerance, sorted, group_out);
    }
  });
}

}  // namespace detail

// A whole batch: group_ids[i] names the group of scores[i] (arbitrary ids; members need not be
// adjacent). Writes one advantage per score into out, in batch order. Throws std::invalid_argument
// when the lengths differ, a score is not finite, or the tolerance is negative or NaN; nothing is
// written then.
inline void rank_advantages_of_scores(std::span<const double> scores, std::span<const std::uint32_t> group_ids,
                                      std::span<double> out, double tolerance = 0.0) {
  detail::with_thread_workspace(
      [&](AdvantageWorkspace& ws) { detail::rank_scores_batched<double>(scores, group_ids, out, tolerance, ws); });
}

// The same over float scores, writing float (matches are still decided in double).
inline void rank_advantages_of_scores(std::span<const float> scores, std::span<const std::uint32_t> group_ids,
                                      std::span<float> out, double tolerance = 0.0) {
  detail::with_thread_workspace(
      [&](AdvantageWorkspace& ws) { detail::rank_scores_batched<float>(scores, group_ids, out, tolerance, ws); });
}

// Both in a workspace the caller keeps (one per thread).
inline void rank_advantages_of_scores(std::span<const double> scores, std::span<const std::uint32_t> group_ids,
                                      std::span<double> out, double tolerance, AdvantageWorkspace& workspace) {
  detail::rank_scores_batched<double>(scores, group_ids, out, tolerance, workspace);
}
inline void rank_advantages_of_scores(std::span<const float> scores, std::span<const std::uint32_t> group_ids,
                                      std::span<float> out, double tolerance, AdvantageWorkspace& workspace) {
  detail::rank_scores_batched<float>(scores, group_ids, out, tolerance, workspace);
}

// One group by the pairwise definition, O(G^2) and nothing clever: the oracle of the tests.
inline std::vector<double> rank_advantages_of_scores_reference(std::span<const double> group, double tolerance = 0.0) {
  detail::validate_scores("rank_advantages_of_scores_reference", group, tolerance);
  std::vector<double> out(group.size(), 0.0);
  if (group.size() < 2) return out;
  for (std::size_t i = 0; i < group.size(); ++i) {
    int wins = 0;
    int losses = 0;
    for (std::size_t j = 0; j < group.size(); ++j) {
      if (i == j) continue;
      if (group[i] - group[j] > tolerance) ++wins;
      if (group[j] - group[i] > tolerance) ++losses;
    }
    out[i] = static_cast<double>(wins - losses) / static_cast<double>(group.size() - 1);
  }
  return out;
}

}  // namespace leap

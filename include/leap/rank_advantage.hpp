// SPDX-License-Identifier: Apache-2.0
// The rank-based (pairwise tournament) advantage of LEAP.
//
// Within a group every pair of trajectories plays one match decided by an order on outcomes
// (KernelOrder{} by default: LEAP as published, an earlier success beats a later one and any success
// beats a failure). Trajectory i's Copeland score is wins - losses (a match decided by the turn counts
// KernelOrder::turn_weight, 1 unless set); its advantage is score / (G - 1), in [-1, 1]. The
// advantages of a group sum to zero, are 0 for an all-tied group, and do not change when every
// speedup is multiplied by one constant. A group of one has no opponent: its advantage is 0.
//
// Which path computes it (results are identical; tests check every path against the oracle):
//   class-only KernelOrder, a batch whose groups  the same lanes in a loop compiled for that size, each
//   have 4, 8 or 16 members                       advantage read from a table (other sizes in the batch
//                                                 take the rows below)
//   speedup or token key, every match worth 1,   banded keys in the same kind of loop: class and
//   a batch whose groups have 4, 8 or 16 members  speedup band as one double compare, each pair once,
//                                                 in 32-byte lanes where the CPU has AVX2 (chosen at
//                                                 run time), else 16-byte (a group the bands cannot
//                                                 hold takes the rows below)
//   KernelOrder, G <= 16                          the whole group in SIMD lanes, on the stack (banded
//                                                 keys where they hold and every match is worth 1;
//                                                 else with a speedup or token key, G <= 12: each pair
//                                                 once; detail/rank_lanes.hpp; scalar up to 12 without
//                                                 GCC/Clang vector extensions)
//   KernelOrder, G < detail::pairwise_crossover   each pair once, O(G^2), vectorised
//   KernelOrder, larger G                         sorting and counting, O(G log G), exact also for
//                                                 non-transitive tolerance ties (detail/rank_kernels.hpp)
//   any other order                               each ordered pair, O(G^2), like the oracle
// With turn_weight < 1 the KernelOrder paths add the turn-decided part of each score, counted by
// binary search over the solved turns (detail/rank_kernels.hpp).
#pragma once

#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "leap/advantage_workspace.hpp"
#include "leap/detail/error.hpp"
#include "leap/detail/group_index.hpp"
#include "leap/detail/rank_kernels.hpp"
#include "leap/detail/rank_lanes.hpp"
#include "leap/kernel_order.hpp"
#include "leap/outcome.hpp"

namespace leap {
namespace detail {

template <class Order>
constexpr void check_order_type() {
  static_assert(outcome_order<Order>,
                "leap::rank_advantages: the order must provide `int compare(const leap::Outcome& a, const "
                "leap::Outcome& b) const` returning +1 when a beats b, -1 when b beats a and 0 for a tie");
}

inline void validate_outcomes(const char* function, std::span<const Outcome> outcomes) {
  int any = 0;  // the sign bit of the OR is set exactly when some turn is negative: no branch per outcome
  for (const Outcome& o : outcomes) any |= o.solved_turn;
  if (any >= 0) return;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].solved_turn < 0) {
      throw_invalid_argument("leap::", function, ": outcome ", i, " has a negative solved_turn (",
                             outcomes[i].solved_turn, "); use 0 for never solved");
    }
  }
}

// One group's advantages, score / (G - 1), by the fastest exact path for the order (see the table at
// the top of this file). For KernelOrder, workspace.encoder must hold the order's encoding.
template <class Real, class Order>
void group_advantages(std::span<const Outcome> group, const Order& order, RankWorkspace& workspace,
                      std::span<Real> out) {
  if (group.size() < 2) {
    std::fill(out.begin(), out.end(), Real{0});
    return;
  }
  if constexpr (std::is_same_v<Order, KernelOrder>) {
    if (group.size() <= lane_group_max) {
      lane_group_advantages(group, workspace.encoder, out);
      return;
    }
    workspace.scores.resize(group.size());
    const std::span<std::int64_t> scores(workspace.scores);
    if (group.size() < pairwise_crossover) {
      pairwise_scores(group, order, workspace.keys, scores);
    } else {
      sorted_scores(group, order, workspace, scores);
    }
    const double opponents = static_cast<double>(group.size() - 1);
    if (!order.turn_weighted()) {
      for (std::size_t i = 0; i < group.size(); ++i)
        out[i] = static_cast<Real>(static_cast<double>(scores[i]) / opponents);
      return;
    }
    workspace.turn_decided.resize(group.size());
    turn_scores(group, workspace.solved_turns, workspace.turn_decided);
    for (std::size_t i = 0; i < group.size(); ++i) {
      out[i] =
          static_cast<Real>(weighted_advantage(scores[i], workspace.turn_decided[i], order.turn_weight, opponents));
    }
  } else {
    pairwise_advantages_full(group, order, out);
  }
}

#if LEAP_DETAIL_SIMD_LANES
// A class-only order (KernelOrder{}, LEAP as published) on a batch whose first group has 4, 8 or 16
// members: trainers' groups have one size, so the batch loop is compiled for it (inlined whole, the
// advantages read from a table, built once for the batch when turn_weight < 1), with
// group_advantages for groups of other sizes. Returns false, having done nothing, for any other
// first size.
template <class Real>
bool class_groups_of_one_size(std::span<const Outcome> results, std::span<const std::uint32_t> group_ids,
                              std::span<Real> out, const KernelOrder& order, RankWorkspace& rank,
                              BatchScratch& scratch) {
  const auto groups_of = [&]<std::size_t N>() {
    std::optional<WeightedAdvantages<N>> weighted;  // with turn_weight < 1, when the batch repays building it
    if (rank.encoder.turn_weighted && results.size() >= 4 * WeightedAdvantages<N>::entries) {
      weighted.emplace(rank.encoder.turn_weight);
    }
    const WeightedAdvantages<N>* table = weighted ? &*weighted : nullptr;
    for_each_group(group_ids, results, out, scratch, [&](std::span<const Outcome> group, std::span<Real> group_out) {
      if (group.size() == N) [[likely]] {
        class_group_of_size<N>(group.data(), rank.encoder, group_out.data(), table);
      } else {
        group_advantages(group, order, rank, group_out);
      }
    });
    return true;
  };
  switch (group_ids.empty() ? 0 : run_end(group_ids, 0, 0)) {
    case 4: return groups_of.template operator()<4>();
    case 8: return groups_of.template operator()<8>();
    case 16: return groups_of.template operator()<16>();
    default: return false;
  }
}

#if LEAP_DETAIL_WIDE_LANES
// band_groups_of_one_size's loop over the groups in 32-byte lanes, compiled for AVX2; called only
// where wide_lanes_available(). A contiguous batch (the trainer's) is walked here as for_each_group
// walks it, so that each group's kernel is inlined into the loop: for_each_group is compiled for the
// baseline target and could only call the AVX2 code once per group. Any other batch (or one whose ids
// turn out not to be monotone) takes for_each_group, which then rewrites every group.
template <std::size_t N, BandTokens Tokens, class Real>
LEAP_DETAIL_TARGET_AVX2 void band_groups_wide(std::span<const Outcome> results,
                                              std::span<const std::uint32_t> group_ids, std::span<Real> out,
                                              const KernelOrder& order, RankWorkspace& rank, BatchScratch& scratch) {
  // A lambda does not inherit its function's target.
  const auto group_of = [&](std::span<const Outcome> group, std::span<Real> group_out) LEAP_DETAIL_TARGET_AVX2 {
    if (group.size() != N || !band_group_wide<N, Tokens>(group.data(), rank.encoder, group_out.data())) [[unlikely]] {
      group_advantages(group, order, rank, group_out);
    }
  };
  if (!spans_overlap(results, out)) {
    const std::size_t n = group_ids.size();
    int direction = 0;  // as in for_each_monotone_run
    std::size_t begin = 0;
    while (begin < n) {
      if (begin > 0) {
        const int step = group_ids[begin] > group_ids[begin - 1] ? 1 : -1;
        if (direction == 0) direction = step;
        if (step != direction) break;
      }
      const std::size_t end = run_end(group_ids, begin, N);
      if (end - begin != N || !band_group_wide<N, Tokens>(results.data() + begin, rank.encoder, out.data() + begin))
          [[unlikely]] {
        group_advantages(results.subspan(begin, end - begin), order, rank, out.subspan(begin, end - begin));
      }
      begin = end;
    }
    if (begin == n) return;
  }
  for_each_group(group_ids, results, out, scratch, group_of);
}
#endif

// An order with a speedup or token key and every match worth 1 (with_speedup, with_speedup_and_tokens)
// on a batch whose first group has 4, 8 or 16 members: the banded lanes (rank_lanes.hpp) in a loop
// compiled for that size and for how the token key is played (off; exact, when its factor is 1;
// banded: BandTokens in rank_lanes.hpp), each advantage read from a table. A
// group that does not fit the bands, or has another size, takes group_advantages. Returns false,
// having done nothing, for any other first size.
template <class Real>
bool band_groups_of_one_size(std::span<const Outcome> results, std::span<const std::uint32_t> group_ids,
                             std::span<Real> out, const KernelOrder& order, RankWorkspace& rank,
                             BatchScratch& scratch) {
  const auto groups_of = [&]<std::size_t N, BandTokens Tokens>() {
#if LEAP_DETAIL_WIDE_LANES
    if (wide_lanes_available()) {
      band_loop_taken = BandLoop::wide;
      band_groups_wide<N, Tokens>(results, group_ids, out, order, rank, scratch);
      return true;
    }
#endif
    band_loop_taken = BandLoop::narrow;
    for_each_group(group_ids, results, out, scratch, [&](std::span<const Outcome> group, std::span<Real> group_out) {
      if (group.size() != N || !band_group_of_size<N, Tokens>(group.data(), rank.encoder, group_out.data()))
          [[unlikely]] {
        group_advantages(group, order, rank, group_out);
      }
    });
    return true;
  };
  const auto sized = [&]<BandTokens Tokens>() {
    switch (group_ids.empty() ? 0 : run_end(group_ids, 0, 0)) {
      case 4: return groups_of.template operator()<4, Tokens>();
      case 8: return groups_of.template operator()<8, Tokens>();
      case 16: return groups_of.template operator()<16, Tokens>();
      default: return false;
    }
  };
  switch (band_tokens(rank.encoder)) {
    case BandTokens::off: return sized.template operator()<BandTokens::off>();
    case BandTokens::exact: return sized.template operator()<BandTokens::exact>();
    case BandTokens::banded: break;
  }
  return sized.template operator()<BandTokens::banded>();
}
#endif

template <class Real, class Order>
void rank_advantages_batched(const char* function, std::span<const Outcome> results,
                             std::span<const std::uint32_t> group_ids, std::span<Real> out, const Order& order,
                             AdvantageWorkspace& workspace) {
  check_order_type<Order>();
  require_same_size(function, "group_ids", group_ids.size(), "results", results.size());
  require_same_size(function, "out", out.size(), "results", results.size());
  if (results.size() > UINT32_MAX) {
    throw_invalid_argument("leap::", function, ": results.size() (", results.size(), ") exceeds 2^32 - 1");
  }
  validate_if_able(order);
  validate_outcomes(function, results);
  WorkspaceAccess access(workspace, function);
  RankWorkspace& rank = access.rank();
  if constexpr (std::is_same_v<Order, KernelOrder>) {
    rank.encoder = KeyEncoder(order);
#if LEAP_DETAIL_SIMD_LANES
    if (rank.encoder.class_only && class_groups_of_one_size(results, group_ids, out, order, rank, access.batch())) {
      return;
    }
    if (!rank.encoder.class_only && !rank.encoder.turn_weighted &&
        band_groups_of_one_size(results, group_ids, out, order, rank, access.batch())) {
      return;
    }
#endif
  }
  for_each_group(group_ids, results, out, access.batch(),
                 [&](std::span<const Outcome> group, std::span<Real> group_out) {
                   group_advantages(group, order, rank, group_out);
                 });
}

}  // namespace detail

// Advantages of one group, in the group's order.
template <class Order = KernelOrder>
std::vector<double> rank_advantages(std::span<const Outcome> group, const Order& order = {}) {
  detail::check_order_type<Order>();
  detail::validate_if_able(order);
  detail::validate_outcomes("rank_advantages", group);
  std::vector<double> out(group.size(), 0.0);
  detail::with_thread_workspace([&](AdvantageWorkspace& workspace) {
    detail::WorkspaceAccess access(workspace, "rank_advantages");
    detail::RankWorkspace& rank = access.rank();
    if constexpr (std::is_same_v<Order, KernelOrder>) rank.encoder = detail::KeyEncoder(order);
    detail::group_advantages(group, order, rank, std::span<double>(out));
  });
  return out;
}

// The pairwise definition, O(G^2) and nothing clever: the oracle the fast paths are tested against.
// Each match adds order.match(a, b) where the order has it (KernelOrder: +-1, or +-turn_weight when
// the turn decides it), else the sign of order.compare(a, b).
template <class Order = KernelOrder>
std::vector<double> rank_advantages_reference(std::span<const Outcome> group, const Order& order = {}) {
  detail::check_order_type<Order>();
  detail::validate_if_able(order);
  detail::validate_outcomes("rank_advantages_reference", group);
  std::vector<double> out(group.size(), 0.0);
  if (group.size() < 2) return out;
  for (std::size_t i = 0; i < group.size(); ++i) {
    double score = 0.0;
    for (std::size_t j = 0; j < group.size(); ++j) {
      if (i == j) continue;
      score += detail::match_value(order, group[i], group[j]);
    }
    out[i] = score / static_cast<double>(group.size() - 1);
  }
  return out;
}

// A whole batch: group_ids[i] names the group of results[i]. Ids are arbitrary 32-bit values and a
// group's members need not be adjacent (contiguous runs in increasing or decreasing id order, as
// trainers produce them, are the fast case: no index is built). Writes one advantage per result into
// out, in batch order. Throws std::invalid_argument when the three lengths differ, an outcome has a
// negative turn, or a tolerance of the order is NaN; nothing is written then. Works in the calling
// thread's AdvantageWorkspace: nothing is allocated after the first call of a given size.
template <class Order = KernelOrder>
void rank_advantages(std::span<const Outcome> results, std::span<const std::uint32_t> group_ids, std::span<double> out,
                     const Order& order = {}) {
  detail::with_thread_workspace([&](AdvantageWorkspace& workspace) {
    detail::rank_advantages_batched<double>("rank_advantages", results, group_ids, out, order, workspace);
  });
}

// The same, writing float (for trainers whose loss runs in float).
template <class Order = KernelOrder>
void rank_advantages(std::span<const Outcome> results, std::span<const std::uint32_t> group_ids, std::span<float> out,
                     const Order& order = {}) {
  detail::with_thread_workspace([&](AdvantageWorkspace& workspace) {
    detail::rank_advantages_batched<float>("rank_advantages", results, group_ids, out, order, workspace);
  });
}

// The same in a workspace the caller keeps (one per thread).
template <class Order>
void rank_advantages(std::span<const Outcome> results, std::span<const std::uint32_t> group_ids, std::span<double> out,
                     const Order& order, AdvantageWorkspace& workspace) {
  detail::rank_advantages_batched<double>("rank_advantages", results, group_ids, out, order, workspace);
}
template <class Order>
void rank_advantages(std::span<const Outcome> results, std::span<const std::uint32_t> group_ids, std::span<float> out,
                     const Order& order, AdvantageWorkspace& workspace) {
  detail::rank_advantages_batched<float>("rank_advantages", results, group_ids, out, order, workspace);
}

}  // namespace leap

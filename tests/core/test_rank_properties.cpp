// SPDX-License-Identifier: Apache-2.0
// Properties of the rank-based advantage on thousands of random groups, built to be full of ties,
// unknown speedups and tolerance-band boundaries. Every fast path is checked against the oracle.
#include <algorithm>
#include <catch2/catch.hpp>
#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "leap/rank_advantage.hpp"

using leap::KernelOrder;
using leap::Outcome;
using leap::Verdict;

namespace {

constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();

// Speedups drawn mostly from a small set so that band boundaries and exact ties are common.
double random_speedup(std::mt19937_64& rng) {
  static const double pool[] = {not_a_number, 0.0,  -1.0, 0.5,       1.0,
                                1.02,         1.04, 1.05, 1.0500001, 1.06,
                                1.1,          1.5,  2.0,  4.0,       std::numeric_limits<double>::infinity()};
  std::uniform_int_distribution<int> pick(0, 19);
  const int k = pick(rng);
  if (k < 15) return pool[k];
  return std::uniform_real_distribution<double>(0.25, 4.0)(rng);
}

std::uint32_t random_tokens(std::mt19937_64& rng) {
  static const std::uint32_t pool[] = {0, 1, 100, 104, 105, 106, 110, 200, 1000};
  std::uniform_int_distribution<int> pick(0, 11);
  const int k = pick(rng);
  if (k < 9) return pool[k];
  return std::uniform_int_distribution<std::uint32_t>(0, 3000)(rng);
}

Outcome random_outcome(std::mt19937_64& rng, int max_turns) {
  Outcome o;
  o.solved_turn = std::uniform_int_distribution<int>(0, max_turns)(rng);
  o.best_verdict =
      o.solved_turn > 0 ? Verdict::correct : leap::all_verdicts[std::uniform_int_distribution<std::size_t>(0, 3)(rng)];
  o.speedup = random_speedup(rng);
  o.tokens = random_tokens(rng);
  return o;
}

KernelOrder random_order(std::mt19937_64& rng) {
  // An infinite tolerance ties every known speed, and an unknown one must still lose to them.
  static const double speedup_tolerances[] = {-1.0, 0.0, 0.05, 0.5, std::numeric_limits<double>::infinity()};
  static const double token_tolerances[] = {-1.0, 0.0, 0.05, 1.0};
  std::uniform_int_distribution<int> coin(0, 1);
  std::uniform_int_distribution<int> four(0, 3);
  KernelOrder order;
  order.by_turn = coin(rng) != 0;
  order.by_severity = coin(rng) != 0;
  order.speedup_tolerance = speedup_tolerances[std::uniform_int_distribution<int>(0, 4)(rng)];
  order.token_tolerance = token_tolerances[four(rng)];
  order.tokens_only_when_solved = coin(rng) != 0;
  return order;
}

std::vector<Outcome> random_group(std::mt19937_64& rng, std::size_t size) {
  const int max_turns = std::uniform_int_distribution<int>(1, 3)(rng);
  std::vector<Outcome> group(size);
  for (Outcome& o : group) o = random_outcome(rng, max_turns);
  return group;
}

std::size_t random_size(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pick(0, 9);
  const int k = pick(rng);
  if (k < 6) return std::uniform_int_distribution<std::size_t>(1, 16)(rng);
  if (k < 9) return std::uniform_int_distribution<std::size_t>(17, 120)(rng);
  return std::uniform_int_distribution<std::size_t>(121, 400)(rng);
}

}  // namespace

TEST_CASE("fast path == oracle on random groups, every path, every order", "[rank][property]") {
  std::mt19937_64 rng(20261129);
  for (int round = 0; round < 3000; ++round) {
    const auto group = random_group(rng, random_size(rng));
    const KernelOrder order = random_order(rng);
    const auto oracle = leap::rank_advantages_reference(group, order);
    REQUIRE(leap::rank_advantages(group, order) == oracle);

    // Every internal path, whatever size the dispatcher would pick: pairwise, and sorted with each
    // way of counting inside speedup windows.
    leap::detail::RankWorkspace workspace;
    std::vector<std::int64_t> sorted(group.size()), pairwise(group.size());
    leap::detail::pairwise_scores(group, order, workspace.keys, pairwise);
    for (auto counting : {leap::detail::WindowCounting::scan, leap::detail::WindowCounting::fenwick,
                          leap::detail::WindowCounting::automatic}) {
      workspace.window_counting = counting;
      leap::detail::sorted_scores(group, order, workspace, sorted);
      REQUIRE(sorted == pairwise);
    }
    if (group.size() > 1) {
      for (std::size_t i = 0; i < group.size(); ++i) {
        REQUIRE(static_cast<double>(sorted[i]) / static_cast<double>(group.size() - 1) == oracle[i]);
      }
    }
  }
}

// Every ranking path at turn weights 0, 1 and between, against the oracle (which sums match()).
// w = 0 and w = 1 are sums of integers, so those must agree exactly; other weights to rounding.
TEST_CASE("turn_weight: every path == oracle on random groups at w = 0, 1 and fractions",
          "[rank][property][turn_weight]") {
  std::mt19937_64 rng(20261130);
  const double weights[] = {0.0, 1.0, 0.5, 0.25, 1.0 / 3.0, 0.9};
  for (int round = 0; round < 3000; ++round) {
    const auto group = random_group(rng, random_size(rng));
    KernelOrder order = random_order(rng);
    order.turn_weight = round % 7 == 6 ? std::uniform_real_distribution<double>(0.0, 1.0)(rng) : weights[round % 6];
    const bool exact = order.turn_weight == 0.0 || order.turn_weight == 1.0;
    const auto oracle = leap::rank_advantages_reference(group, order);
    const auto agrees = [&](double value, std::size_t i) {
      return exact ? value == oracle[i] : std::abs(value - oracle[i]) <= 1e-12;
    };

    const auto dispatched = leap::rank_advantages(group, order);
    for (std::size_t i = 0; i < group.size(); ++i) REQUIRE(agrees(dispatched[i], i));
    if (group.size() < 2) continue;

    // Each path on its own, whatever size the dispatcher would pick for this group.
    leap::detail::RankWorkspace workspace;
    const double opponents = static_cast<double>(group.size() - 1);
    std::vector<std::int64_t> scores(group.size()), turn_decided(group.size());
    leap::detail::turn_scores(group, workspace.solved_turns, turn_decided);
    if (!order.by_turn) std::fill(turn_decided.begin(), turn_decided.end(), 0);
    leap::detail::pairwise_scores(group, order, workspace.keys, scores);
    for (std::size_t i = 0; i < group.size(); ++i) {
      REQUIRE(agrees(leap::detail::weighted_advantage(scores[i], turn_decided[i], order.turn_weight, opponents), i));
    }
    leap::detail::sorted_scores(group, order, workspace, scores);
    for (std::size_t i = 0; i < group.size(); ++i) {
      REQUIRE(agrees(leap::detail::weighted_advantage(scores[i], turn_decided[i], order.turn_weight, opponents), i));
    }
    if (group.size() <= leap::detail::small_group_max) {
      std::vector<double> stack_out(group.size());
      leap::detail::small_group_advantages(group, leap::detail::KeyEncoder(order), std::span<double>(stack_out));
      for (std::size_t i = 0; i < group.size(); ++i) REQUIRE(agrees(stack_out[i], i));
      REQUIRE(stack_out == dispatched);  // one formula, so the paths agree with each other bit for bit
    }
  }
}

// The SIMD lane kernels (G <= 16) and the scalar stack pass they replace, each called directly with
// every lane width, against the oracle: random orders (the published one a third of the time),
// turn weights, and turns up to INT_MAX so that the 32-bit class key meets its limits.
TEST_CASE("lane kernels == scalar small-group pass == oracle, G = 2..16, every order and turn_weight",
          "[rank][property][lanes]") {
  std::mt19937_64 rng(20261201);
  const double weights[] = {1.0, 0.0, 0.5, 1.0 / 3.0};
  for (int round = 0; round < 6000; ++round) {
    const std::size_t size = std::uniform_int_distribution<std::size_t>(2, 16)(rng);
    auto group = random_group(rng, size);
    if (round % 5 == 0) {
      static const int far_turns[] = {1, 2, INT_MAX, INT_MAX - 1, 1 << 30, (1 << 30) + 1};
      for (Outcome& o : group) {
        if (o.solved_turn > 0) o.solved_turn = far_turns[std::uniform_int_distribution<int>(0, 5)(rng)];
      }
    }
    KernelOrder order = round % 3 == 0 ? KernelOrder{} : random_order(rng);
    order.turn_weight = weights[(round / 3) % 4];
    const bool exact = order.turn_weight == 0.0 || order.turn_weight == 1.0;
    const auto oracle = leap::rank_advantages_reference(group, order);
    const leap::detail::KeyEncoder encode(order);

    std::vector<double> lanes(size);
    std::vector<float> lanes_float(size);
    leap::detail::lane_group_advantages(group, encode, std::span<double>(lanes));
    leap::detail::lane_group_advantages(group, encode, std::span<float>(lanes_float));
    for (std::size_t i = 0; i < size; ++i) {
      if (exact) {
        REQUIRE(lanes[i] == oracle[i]);
      } else {
        REQUIRE(std::abs(lanes[i] - oracle[i]) <= 1e-12);
      }
      REQUIRE(lanes_float[i] == static_cast<float>(lanes[i]));
    }
    REQUIRE(leap::rank_advantages(group, order) == lanes);  // the dispatcher takes the lanes
#if defined(__GNUC__) || defined(__clang__)
    if (!encode.class_only) {  // the double-lane kernel at every size it can hold, not only 13..16
      std::vector<double> wide(size);
      leap::detail::key_lanes<8>(group, encode, std::span<double>(wide));
      REQUIRE(wide == lanes);
    }
#endif
    if (size <= leap::detail::small_group_max) {
      std::vector<double> scalar(size);
      leap::detail::small_group_advantages(group, encode, std::span<double>(scalar));
      REQUIRE(scalar == lanes);  // one formula: bit for bit, also at fractional weights
    }
  }
}

#if defined(__GNUC__) || defined(__clang__)
TEST_CASE("every lane width gives the same scores (a group of 3 in 4, 8 and 16 lanes)", "[rank][property][lanes]") {
  std::mt19937_64 rng(41);
  for (int round = 0; round < 2000; ++round) {
    const auto group = random_group(rng, std::uniform_int_distribution<std::size_t>(2, 4)(rng));
    KernelOrder order = round % 2 == 0 ? KernelOrder{} : random_order(rng);
    order.turn_weight = round % 4 < 2 ? 1.0 : 0.25;
    const leap::detail::KeyEncoder encode(order);
    std::vector<double> four(group.size()), eight(group.size()), sixteen(group.size());
    if (encode.class_only) {
      leap::detail::class_lanes<1>(group, encode, std::span<double>(four));
      leap::detail::class_lanes<2>(group, encode, std::span<double>(eight));
      leap::detail::class_lanes<4>(group, encode, std::span<double>(sixteen));
    } else {
      leap::detail::key_lanes<2>(group, encode, std::span<double>(four));
      leap::detail::key_lanes<4>(group, encode, std::span<double>(eight));
      leap::detail::key_lanes<8>(group, encode, std::span<double>(sixteen));
    }
    REQUIRE(four == eight);
    REQUIRE(eight == sixteen);
    if (order.turn_weight == 1.0) REQUIRE(four == leap::rank_advantages_reference(group, order));
  }
}
#endif

// A batch whose groups have one size of 4, 8 or 16 runs a loop compiled for that size, with the
// advantages read from a table of score / (G - 1): the same bits as each group ranked alone, also
// with groups of other sizes among them, ids that are not monotone, float output and turn weights.
TEST_CASE("a batch of one group size (4, 8, 16) equals its groups ranked one by one, bit for bit",
          "[rank][property][batch][lanes]") {
  std::mt19937_64 rng(20261130);
  const double weights[] = {1.0, 0.0, 0.5, 1.0 / 3.0};
  for (int round = 0; round < 600; ++round) {
    const std::size_t size = std::size_t{4} << (round % 3);
    KernelOrder order;
    order.turn_weight = weights[(round / 3) % 4];
    std::vector<Outcome> results;
    std::vector<std::uint32_t> ids;
    std::vector<std::vector<Outcome>> groups;
    // Every eighth batch is large enough (4 x (2G - 1)^2 members or more) that a turn-weighted batch
    // reads its advantages from a table built for it.
    const std::size_t group_count = round % 8 == 7 ? 4 * (2 * size - 1) * (2 * size - 1) / size + 5
                                                   : std::uniform_int_distribution<std::size_t>(1, 40)(rng);
    for (std::size_t g = 0; g < group_count; ++g) {
      // The first group sets the size; a sixth of the others differ (1 to 17 members).
      const bool odd = g > 0 && std::uniform_int_distribution<int>(0, 5)(rng) == 0;
      const std::size_t members = odd ? std::uniform_int_distribution<std::size_t>(1, 17)(rng) : size;
      groups.push_back(random_group(rng, members));
      for (const Outcome& o : groups.back()) {
        results.push_back(o);
        ids.push_back(static_cast<std::uint32_t>(g));
      }
    }
    if (round % 4 == 3 && round % 16 != 7 && group_count > 2) {
      std::swap(ids.front(), ids.back());  // not contiguous: the gather path
    }

    std::vector<double> out(results.size(), -7.0);
    std::vector<float> out_float(results.size(), -7.0F);
    leap::rank_advantages(results, ids, std::span<double>(out), order);
    leap::rank_advantages(results, ids, std::span<float>(out_float), order);
    std::vector<std::vector<double>> expected(group_count);
    for (std::size_t g = 0; g < group_count; ++g) {
      std::vector<Outcome> members;
      for (std::size_t i = 0; i < results.size(); ++i) {
        if (ids[i] == g) members.push_back(results[i]);
      }
      expected[g] = leap::rank_advantages(members, order);
    }
    std::vector<std::size_t> seen(group_count, 0);
    for (std::size_t i = 0; i < results.size(); ++i) {
      const double want = expected[ids[i]][seen[ids[i]]++];
      REQUIRE(out[i] == want);
      REQUIRE(out_float[i] == static_cast<float>(want));
    }
  }
}

#if defined(__GNUC__) || defined(__clang__)
TEST_CASE("the fixed-size class kernel == class lanes == oracle, G = 4, 8, 16", "[rank][property][lanes]") {
  std::mt19937_64 rng(7);
  const double weights[] = {1.0, 0.25, 0.0, 1.0 / 3.0};
  for (int round = 0; round < 3000; ++round) {
    KernelOrder order;
    order.turn_weight = weights[round % 4];
    const leap::detail::KeyEncoder encode(order);
    const auto check = [&]<std::size_t N>() {
      const auto group = random_group(rng, N);
      std::vector<double> fixed(N), lanes(N);
      leap::detail::class_group_of_size<N>(group.data(), encode, fixed.data());
      leap::detail::class_lanes<N / 4>(group, encode, std::span<double>(lanes));
      REQUIRE(fixed == lanes);
      const leap::detail::WeightedAdvantages<N> weighted(order.turn_weight);
      std::vector<double> from_table(N);
      leap::detail::class_group_of_size<N>(group.data(), encode, from_table.data(), &weighted);
      REQUIRE(from_table == lanes);
      if (order.turn_weight == 1.0) REQUIRE(fixed == leap::rank_advantages_reference(group, order));
    };
    check.template operator()<4>();
    check.template operator()<8>();
    check.template operator()<16>();
  }
}
#endif

TEST_CASE("turn_weight = 1 is the unweighted order, bit for bit", "[rank][property][turn_weight]") {
  std::mt19937_64 rng(31);
  for (int round = 0; round < 500; ++round) {
    const auto group = random_group(rng, random_size(rng));
    KernelOrder order = random_order(rng);
    order.turn_weight = 1.0;
    std::vector<Outcome> copy = group;
    REQUIRE(leap::rank_advantages(group, order) == leap::rank_advantages_reference(copy, order));
    REQUIRE_FALSE(order.turn_weighted());
  }
}

TEST_CASE("turn_weight interpolates: A(w) = (1 - w) A(0) + w A(1)", "[rank][property][turn_weight]") {
  // Only matches decided by the turn change with w, and each changes linearly.
  std::mt19937_64 rng(37);
  for (int round = 0; round < 500; ++round) {
    const auto group = random_group(rng, random_size(rng));
    KernelOrder order = random_order(rng);
    order.turn_weight = 0.0;
    const auto at_zero = leap::rank_advantages(group, order);
    order.turn_weight = 1.0;
    const auto at_one = leap::rank_advantages(group, order);
    order.turn_weight = 0.375;
    const auto between = leap::rank_advantages(group, order);
    for (std::size_t i = 0; i < group.size(); ++i) {
      REQUIRE(std::abs(between[i] - (0.625 * at_zero[i] + 0.375 * at_one[i])) <= 1e-12);
    }
  }
}

TEST_CASE("fast path == oracle on large groups", "[rank][property]") {
  std::mt19937_64 rng(7);
  for (std::size_t size : {1024u, 3000u}) {
    const auto group = random_group(rng, size);
    const KernelOrder order = KernelOrder::with_speedup_and_tokens();  // the non-transitive case
    REQUIRE(leap::rank_advantages(group, order) == leap::rank_advantages_reference(group, order));
  }
}

TEST_CASE("advantages sum to zero per group and lie in [-1, 1]", "[rank][property]") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 2000; ++round) {
    const auto group = random_group(rng, random_size(rng));
    KernelOrder order = random_order(rng);
    order.turn_weight = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    const auto advantages = leap::rank_advantages(group, order);
    const double sum = std::accumulate(advantages.begin(), advantages.end(), 0.0);
    REQUIRE(std::abs(sum) < 1e-9);
    for (double a : advantages) REQUIRE((a >= -1.0 && a <= 1.0));
  }
}

TEST_CASE("compare is antisymmetric on random pairs", "[order][property]") {
  std::mt19937_64 rng(13);
  for (int round = 0; round < 20000; ++round) {
    const KernelOrder order = random_order(rng);
    const Outcome a = random_outcome(rng, 3);
    const Outcome b = random_outcome(rng, 3);
    REQUIRE(order.compare(a, b) == -order.compare(b, a));
    REQUIRE(order.compare(a, a) == 0);
  }
}

TEST_CASE("invariant under multiplying every speedup by one constant", "[rank][property]") {
  std::mt19937_64 rng(17);
  for (int round = 0; round < 1000; ++round) {
    auto group = random_group(rng, random_size(rng));
    const KernelOrder order = random_order(rng);
    const auto before = leap::rank_advantages(group, order);
    // A power of two scales exactly, so even band boundaries stay where they were.
    const double scale = std::ldexp(1.0, std::uniform_int_distribution<int>(-20, 20)(rng));
    for (Outcome& o : group) o.speedup *= scale;
    REQUIRE(leap::rank_advantages(group, order) == before);
  }
}

TEST_CASE("without a tolerance, invariant under any increasing transform of speedups", "[rank][property]") {
  std::mt19937_64 rng(19);
  for (int round = 0; round < 1000; ++round) {
    auto group = random_group(rng, random_size(rng));
    KernelOrder order = random_order(rng);
    order.speedup_tolerance = 0.0;
    const auto before = leap::rank_advantages(group, order);
    // s -> s^3 + s keeps signs (so unknown stays unknown) and the order of the pooled values.
    for (Outcome& o : group) o.speedup = o.speedup * o.speedup * o.speedup + o.speedup;
    REQUIRE(leap::rank_advantages(group, order) == before);
  }
}

TEST_CASE("permuting a group permutes its advantages", "[rank][property]") {
  std::mt19937_64 rng(23);
  for (int round = 0; round < 1000; ++round) {
    const auto group = random_group(rng, random_size(rng));
    const KernelOrder order = random_order(rng);
    const auto before = leap::rank_advantages(group, order);
    std::vector<std::size_t> perm(group.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<Outcome> shuffled(group.size());
    for (std::size_t i = 0; i < perm.size(); ++i) shuffled[i] = group[perm[i]];
    const auto after = leap::rank_advantages(shuffled, order);
    for (std::size_t i = 0; i < perm.size(); ++i) REQUIRE(after[i] == before[perm[i]]);
  }
}

TEST_CASE("a shuffled batch of many groups equals ranking each group alone", "[rank][batch][property]") {
  std::mt19937_64 rng(29);
  for (int round = 0; round < 50; ++round) {
    const KernelOrder order = random_order(rng);
    std::vector<std::vector<Outcome>> groups(std::uniform_int_distribution<std::size_t>(1, 30)(rng));
    std::vector<Outcome> results;
    std::vector<std::uint32_t> ids;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      groups[g] = random_group(rng, random_size(rng));
      for (const Outcome& o : groups[g]) {
        results.push_back(o);
        ids.push_back(static_cast<std::uint32_t>(g * 2654435761u));  // arbitrary, not sorted
      }
    }
    std::vector<std::size_t> perm(results.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<Outcome> shuffled_results(results.size());
    std::vector<std::uint32_t> shuffled_ids(results.size());
    for (std::size_t i = 0; i < perm.size(); ++i) {
      shuffled_results[i] = results[perm[i]];
      shuffled_ids[i] = ids[perm[i]];
    }
    std::vector<double> out(results.size());
    leap::rank_advantages(shuffled_results, shuffled_ids, out, order);

    std::vector<double> expected;
    for (const auto& group : groups) {
      const auto alone = leap::rank_advantages_reference(group, order);
      expected.insert(expected.end(), alone.begin(), alone.end());
    }
    for (std::size_t i = 0; i < perm.size(); ++i) REQUIRE(out[i] == expected[perm[i]]);
  }
}

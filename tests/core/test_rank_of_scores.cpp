// SPDX-License-Identifier: Apache-2.0
// rank_advantages_of_scores: the Copeland advantage over scalar scores. Both paths against the oracle
// on random groups full of ties and tolerance boundaries, the published order through a scalar
// reward, and every bad input.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "leap/rank_advantage.hpp"
#include "leap/rank_advantage_of_scores.hpp"

using leap::KernelOrder;
using leap::Outcome;
using leap::Verdict;

namespace {

// Scores drawn mostly from a small set, so exact ties and |a - b| == tolerance are common.
double random_score(std::mt19937_64& rng) {
  static const double pool[] = {0.0, 1.0, 1.5, 2.0, 2.5, 3.0, -1.0, 0.1, 0.2, 0.30000000000000004, 1e-12};
  std::uniform_int_distribution<int> pick(0, 14);
  const int k = pick(rng);
  if (k < 11) return pool[k];
  return std::uniform_real_distribution<double>(-3.0, 3.0)(rng);
}

std::vector<double> random_group(std::mt19937_64& rng, std::size_t size) {
  std::vector<double> group(size);
  for (double& score : group) score = random_score(rng);
  return group;
}

std::size_t random_size(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> pick(0, 9);
  const int k = pick(rng);
  if (k < 6) return std::uniform_int_distribution<std::size_t>(1, 16)(rng);
  if (k < 9) return std::uniform_int_distribution<std::size_t>(17, 100)(rng);
  return std::uniform_int_distribution<std::size_t>(101, 400)(rng);
}

double random_tolerance(std::mt19937_64& rng) {
  static const double pool[] = {0.0, 0.1, 0.5, 1.0, 1e-9, std::numeric_limits<double>::infinity()};
  return pool[std::uniform_int_distribution<int>(0, 5)(rng)];
}

std::vector<double> batched(const std::vector<double>& scores, const std::vector<std::uint32_t>& ids,
                            double tolerance) {
  std::vector<double> out(scores.size(), -7.0);
  leap::rank_advantages_of_scores(scores, ids, out, tolerance);
  return out;
}

}  // namespace

TEST_CASE("scores: small groups by hand", "[scores]") {
  const std::vector<double> scores = {3.0, 1.0, 2.0, 2.0};
  const std::vector<std::uint32_t> one(4, 0);
  // 3 beats all three; 1 loses to all three; each 2 beats 1, loses to 3, ties the other 2.
  CHECK(batched(scores, one, 0.0) == std::vector<double>{1.0, -1.0, 0.0, 0.0});
  // Within 1.0 everything adjacent ties: 3 beats only 1, 1 loses only to 3.
  CHECK(batched(scores, one, 1.0) == std::vector<double>{1.0 / 3, -1.0 / 3, 0.0, 0.0});
  // The boundary is a tie: 3 - 2 == 1.0 is not > 1.0.
  CHECK(batched({3.0, 2.0}, {5, 5}, 1.0) == std::vector<double>{0.0, 0.0});
  CHECK(batched({3.0, 2.0}, {5, 5}, 0.999) == std::vector<double>{1.0, -1.0});
  // A group of one has no opponent; an all-tied group is all zeros.
  CHECK(batched({42.0}, {9}, 0.0) == std::vector<double>{0.0});
  CHECK(batched({1.0, 1.0, 1.0}, {0, 0, 0}, 0.0) == std::vector<double>{0.0, 0.0, 0.0});
  CHECK(batched({}, {}, 0.0).empty());
}

TEST_CASE("scores: interleaved groups are ranked apart, in batch order", "[scores]") {
  const std::vector<double> scores = {1.0, 10.0, 2.0, 20.0, 3.0};
  const std::vector<std::uint32_t> ids = {7, 3, 7, 3, 7};
  CHECK(batched(scores, ids, 0.0) == std::vector<double>{-1.0, -1.0, 0.0, 1.0, 1.0});
}

TEST_CASE("scores: out may be the scores' own buffer", "[scores]") {
  std::mt19937_64 rng(23);
  for (std::size_t size : {5u, 40u, 300u}) {
    std::vector<double> scores = random_group(rng, size);
    std::vector<std::uint32_t> ids(size);
    for (std::size_t i = 0; i < size; ++i) ids[i] = static_cast<std::uint32_t>(i % 3);
    const auto expected = batched(scores, ids, 0.1);
    leap::rank_advantages_of_scores(scores, ids, scores, 0.1);
    REQUIRE(scores == expected);
  }
}

TEST_CASE("scores: both paths == oracle on random groups", "[scores][property]") {
  std::mt19937_64 rng(20261130);
  std::vector<double> sorted_scratch;
  for (int round = 0; round < 3000; ++round) {
    const auto group = random_group(rng, random_size(rng));
    const double tolerance = random_tolerance(rng);
    const auto oracle = leap::rank_advantages_of_scores_reference(group, tolerance);
    REQUIRE(batched(group, std::vector<std::uint32_t>(group.size(), 1), tolerance) == oracle);
    if (group.size() < 2) continue;
    std::vector<double> pairwise(group.size()), sorted(group.size());
    leap::detail::score_group_pairwise<double>(group, tolerance, pairwise);
    leap::detail::score_group_sorted<double>(group, tolerance, sorted_scratch, sorted);
    REQUIRE(pairwise == oracle);
    REQUIRE(sorted == oracle);
  }
}

TEST_CASE("scores: float scores give the double result rounded once", "[scores][property]") {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 500; ++round) {
    const std::size_t size = random_size(rng);
    std::vector<float> scores(size);
    for (float& s : scores) s = static_cast<float>(random_score(rng));
    const std::vector<double> widened(scores.begin(), scores.end());
    const double tolerance = random_tolerance(rng);
    const auto oracle = leap::rank_advantages_of_scores_reference(widened, tolerance);
    std::vector<float> out(size);
    leap::rank_advantages_of_scores(scores, std::vector<std::uint32_t>(size, 0), out, tolerance);
    for (std::size_t i = 0; i < size; ++i) REQUIRE(out[i] == static_cast<float>(oracle[i]));
  }
}

TEST_CASE("scores: sum to zero per group, lie in [-1, 1], ignore a shift of every score", "[scores][property]") {
  std::mt19937_64 rng(17);
  for (int round = 0; round < 1000; ++round) {
    const auto group = random_group(rng, random_size(rng));
    const std::vector<std::uint32_t> ids(group.size(), 0);
    const auto advantages = batched(group, ids, 0.0);
    REQUIRE(std::abs(std::accumulate(advantages.begin(), advantages.end(), 0.0)) < 1e-9);
    for (double a : advantages) REQUIRE((a >= -1.0 && a <= 1.0));
    // Without a tolerance only the order of the scores matters: any increasing transform keeps it.
    std::vector<double> transformed(group.size());
    for (std::size_t i = 0; i < group.size(); ++i) transformed[i] = std::exp(group[i]) * 3.0 + 100.0;
    REQUIRE(batched(transformed, ids, 0.0) == advantages);
  }
}

TEST_CASE("scores: max_turns + 1 - t for a success at turn t, 0 for a failure, is LEAP's published order",
          "[scores][property]") {
  std::mt19937_64 rng(1);
  for (int round = 0; round < 500; ++round) {
    const int max_turns = std::uniform_int_distribution<int>(1, 5)(rng);
    // Mostly small batches; the last ones large enough for groups on the sorted path.
    const std::size_t size = round < 450 ? std::uniform_int_distribution<std::size_t>(1, 64)(rng)
                                         : std::uniform_int_distribution<std::size_t>(100, 3000)(rng);
    std::vector<Outcome> results(size);
    std::vector<double> scores(size);
    std::vector<std::uint32_t> ids(size);
    const auto groups = std::uniform_int_distribution<std::uint32_t>(1, 8)(rng);
    for (std::size_t i = 0; i < size; ++i) {
      Outcome& o = results[i];
      o.solved_turn = std::uniform_int_distribution<int>(0, max_turns)(rng);
      o.best_verdict = o.solved_turn > 0 ? Verdict::correct : Verdict::wrong_answer;
      o.speedup = std::uniform_real_distribution<double>(0.5, 2.0)(rng);  // ignored by the published order
      o.tokens = std::uniform_int_distribution<std::uint32_t>(0, 4000)(rng);
      scores[i] = o.solved_turn > 0 ? static_cast<double>(max_turns + 1 - o.solved_turn) : 0.0;
      ids[i] = std::uniform_int_distribution<std::uint32_t>(0, groups - 1)(rng) * 977u;
    }
    std::vector<double> by_order(size);
    leap::rank_advantages(results, ids, by_order, KernelOrder::turns_only());
    REQUIRE(batched(scores, ids, 0.0) == by_order);
    // Integer scores: any tolerance below 1 changes nothing.
    REQUIRE(batched(scores, ids, 0.5) == by_order);
  }
}

TEST_CASE("scores: bad input throws, naming the argument, and writes nothing", "[scores][errors]") {
  const std::vector<double> scores = {1.0, 2.0, 3.0};
  const std::vector<std::uint32_t> ids = {0, 0, 0};
  std::vector<double> out(3, -7.0);
  const auto untouched = [&] { return out == std::vector<double>(3, -7.0); };
  using Catch::Matchers::Contains;

  CHECK_THROWS_WITH(leap::rank_advantages_of_scores(scores, std::vector<std::uint32_t>{0, 0}, out),
                    Contains("group_ids.size() (2) != scores.size() (3)"));
  std::vector<double> short_out(2);
  CHECK_THROWS_WITH(leap::rank_advantages_of_scores(scores, ids, short_out), Contains("out.size() (2)"));
  CHECK_THROWS_WITH(leap::rank_advantages_of_scores(scores, ids, out, std::nan("")), Contains("tolerance (nan)"));
  CHECK_THROWS_WITH(leap::rank_advantages_of_scores(scores, ids, out, -0.5), Contains("must be >= 0"));
  const std::vector<double> with_nan = {1.0, std::nan(""), 3.0};
  CHECK_THROWS_WITH(leap::rank_advantages_of_scores(with_nan, ids, out), Contains("scores[1] (nan) is not finite"));
  const std::vector<double> with_inf = {1.0, 2.0, -std::numeric_limits<double>::infinity()};
  CHECK_THROWS_AS(leap::rank_advantages_of_scores(with_inf, ids, out), std::invalid_argument);
  CHECK(untouched());
}

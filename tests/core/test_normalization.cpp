// SPDX-License-Identifier: Apache-2.0
// normalize_advantages: hand-made cases, identities with the GRPO and RLOO baselines, bad input.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "leap/advantage_estimator.hpp"
#include "leap/advantage_normalization.hpp"
#include "leap/baselines.hpp"
#include "leap/rank_advantage.hpp"

using Catch::Matchers::Contains;
using leap::AdvantageNormalization;
using leap::Outcome;
using leap::Verdict;

namespace {
Outcome solved(int turn) { return Outcome{turn, Verdict::correct, 1.0, 0}; }
Outcome failed() { return Outcome{0, Verdict::wrong_answer, std::numeric_limits<double>::quiet_NaN(), 0}; }
}  // namespace

TEST_CASE("none leaves the advantages as they are", "[normalization]") {
  std::vector<double> a = {0.5, -0.5, 0.25};
  leap::normalize_advantages(a, {}, AdvantageNormalization::none);
  CHECK(a == std::vector<double>{0.5, -0.5, 0.25});
  CHECK(leap::to_string(AdvantageNormalization::none) == "none");
  CHECK(leap::to_string(AdvantageNormalization::group_std) == "group_std");
  CHECK(leap::to_string(AdvantageNormalization::batch_rms) == "batch_rms");
}

TEST_CASE("group_std divides each group by its unbiased std plus epsilon", "[normalization]") {
  // Group 7: {1, -1}: std sqrt(2). Group 3: {0.5, 0, -0.5}: std 0.5. Interleaved ids.
  std::vector<double> a = {1.0, 0.5, -1.0, 0.0, -0.5};
  const std::vector<std::uint32_t> ids = {7, 3, 7, 3, 3};
  leap::normalize_advantages(a, ids, AdvantageNormalization::group_std, 0.0);
  CHECK(a[0] == Approx(1.0 / std::sqrt(2.0)));
  CHECK(a[2] == Approx(-1.0 / std::sqrt(2.0)));
  CHECK(a[1] == Approx(1.0));
  CHECK(a[3] == 0.0);
  CHECK(a[4] == Approx(-1.0));
  std::vector<double> with_epsilon = {1.0, -1.0};
  leap::normalize_advantages(with_epsilon, std::vector<std::uint32_t>{0, 0}, AdvantageNormalization::group_std, 0.5);
  CHECK(with_epsilon[0] == Approx(1.0 / (std::sqrt(2.0) + 0.5)));
}

TEST_CASE("group_std keeps groups of one and all-equal groups, adjacent or scattered", "[normalization]") {
  // Group 1 is {0.25, 0.25}, group 2 a lone 0.75, group 3 {0, 0}: adjacent, then scattered.
  std::vector<double> adjacent = {0.25, 0.25, 0.75, 0.0, 0.0};
  leap::normalize_advantages(adjacent, std::vector<std::uint32_t>{1, 1, 2, 3, 3}, AdvantageNormalization::group_std);
  CHECK(adjacent == std::vector<double>{0.25, 0.25, 0.75, 0.0, 0.0});
  std::vector<double> scattered = {0.25, 0.0, 0.75, 0.0, 0.25};
  leap::normalize_advantages(scattered, std::vector<std::uint32_t>{1, 3, 2, 3, 1}, AdvantageNormalization::group_std);
  CHECK(scattered == std::vector<double>{0.25, 0.0, 0.75, 0.0, 0.25});
}

TEST_CASE("batch_rms scales the batch to RMS 1, an all-zero batch stays 0", "[normalization]") {
  // RMS sqrt(100 / 25) = 2, a power of two, so the scaled values are exact whether the
  // implementation divides or multiplies by the reciprocal.
  std::vector<double> a(25, 0.0);
  a[0] = 6.0;
  a[7] = -8.0;
  leap::normalize_advantages(a, {}, AdvantageNormalization::batch_rms, 0.0);
  std::vector<double> expected(25, 0.0);
  expected[0] = 3.0;
  expected[7] = -4.0;
  CHECK(a == expected);
  std::vector<float> zeros(5, 0.0f);
  leap::normalize_advantages(zeros, {}, AdvantageNormalization::batch_rms, 0.0);
  CHECK(zeros == std::vector<float>(5, 0.0f));
  std::vector<double> empty;
  leap::normalize_advantages(empty, {}, AdvantageNormalization::batch_rms);
  CHECK(empty.empty());
}

TEST_CASE("turn_weight 0 on binary outcomes is RLOO, with group_std (epsilon 0) it is GRPO's z-score",
          "[normalization][property]") {
  std::mt19937_64 rng(41);
  for (int round = 0; round < 500; ++round) {
    const std::size_t groups = std::uniform_int_distribution<std::size_t>(1, 6)(rng);
    std::vector<Outcome> outcomes;
    std::vector<double> rewards;
    std::vector<std::uint32_t> ids;
    for (std::size_t g = 0; g < groups; ++g) {
      const std::size_t size = std::uniform_int_distribution<std::size_t>(1, 40)(rng);
      for (std::size_t i = 0; i < size; ++i) {
        const int turn = std::uniform_int_distribution<int>(0, 3)(rng);  // any turn: w = 0 makes them tie
        outcomes.push_back(turn > 0 ? solved(turn) : failed());
        rewards.push_back(turn > 0 ? 1.0 : 0.0);
        ids.push_back(static_cast<std::uint32_t>(g * 7919));
      }
    }
    leap::KernelOrder binary;
    binary.turn_weight = 0.0;
    std::vector<double> rank(outcomes.size()), rloo(outcomes.size()), grpo(outcomes.size());
    leap::rank_advantages(outcomes, ids, rank, binary);
    leap::rloo_advantages(rewards, ids, rloo);
    for (std::size_t i = 0; i < rank.size(); ++i) REQUIRE(rank[i] == Approx(rloo[i]).margin(1e-12));
    leap::normalize_advantages(rank, ids, AdvantageNormalization::group_std, 0.0);
    leap::grpo_advantages(rewards, ids, grpo, leap::GrpoOptions{0.0, true});
    for (std::size_t i = 0; i < rank.size(); ++i) REQUIRE(rank[i] == Approx(grpo[i]).margin(1e-9));
  }
}

TEST_CASE("RankAdvantage applies its normalization after ranking", "[normalization]") {
  const std::vector<Outcome> outcomes = {solved(1), solved(2), failed(), failed()};
  const std::vector<std::uint32_t> ids(outcomes.size(), 0);
  std::vector<double> plain(outcomes.size()), scaled(outcomes.size());
  leap::RankAdvantage<>{}.compute(outcomes, ids, plain);
  CHECK(plain == leap::rank_advantages(outcomes));
  leap::RankAdvantage<>{{}, AdvantageNormalization::batch_rms, 0.0}.compute(outcomes, ids, scaled);
  double squares = 0.0;
  for (std::size_t i = 0; i < scaled.size(); ++i) {
    squares += scaled[i] * scaled[i];
    CHECK(scaled[i] * plain[i] >= 0.0);  // signs kept
  }
  CHECK(squares / 4.0 == Approx(1.0));
}

TEST_CASE("normalize_advantages refuses bad input and writes nothing", "[normalization][errors]") {
  std::vector<double> a = {1.0, -1.0};
  CHECK_THROWS_WITH(leap::normalize_advantages(a, std::vector<std::uint32_t>{0}, AdvantageNormalization::group_std),
                    Contains("group_ids.size() (1) != advantages.size() (2)"));
  CHECK_THROWS_WITH(leap::normalize_advantages(a, {}, AdvantageNormalization::batch_rms, -1.0),
                    Contains("epsilon (-1) must be finite and >= 0"));
  std::vector<double> bad = {1.0, std::numeric_limits<double>::infinity()};
  CHECK_THROWS_WITH(leap::normalize_advantages(bad, {}, AdvantageNormalization::batch_rms),
                    Contains("advantages[1] (inf)"));
  CHECK(bad[0] == 1.0);
  CHECK(a == std::vector<double>{1.0, -1.0});
}

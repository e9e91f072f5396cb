// SPDX-License-Identifier: Apache-2.0
// AdvantageWorkspace and the layouts of group ids: the index-free path for contiguous runs, its
// fallback for every other layout, and workspaces kept by the caller, reused, nested and released.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "leap/advantage_normalization.hpp"
#include "leap/baselines.hpp"
#include "leap/rank_advantage.hpp"
#include "leap/rank_advantage_of_scores.hpp"

using leap::KernelOrder;
using leap::Outcome;

namespace {

std::vector<Outcome> random_results(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Outcome> results(n);
  for (Outcome& o : results) {
    o.solved_turn = std::uniform_int_distribution<int>(0, 3)(rng);
    o.best_verdict = o.solved_turn > 0 ? leap::Verdict::correct : leap::Verdict::timeout;
    o.speedup = std::uniform_real_distribution<double>(0.5, 2.0)(rng);
    o.tokens = std::uniform_int_distribution<std::uint32_t>(100, 400)(rng);
  }
  return results;
}

// What rank_advantages must give: each group (members in batch order) ranked alone by the oracle.
std::vector<double> expected_ranks(const std::vector<Outcome>& results, const std::vector<std::uint32_t>& ids,
                                   const KernelOrder& order) {
  std::vector<double> expected(results.size());
  std::vector<bool> done(results.size(), false);
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (done[i]) continue;
    std::vector<std::size_t> members;
    std::vector<Outcome> group;
    for (std::size_t j = i; j < results.size(); ++j) {
      if (ids[j] == ids[i]) {
        members.push_back(j);
        group.push_back(results[j]);
        done[j] = true;
      }
    }
    const auto ranks = leap::rank_advantages_reference(group, order);
    for (std::size_t k = 0; k < members.size(); ++k) expected[members[k]] = ranks[k];
  }
  return expected;
}

// GRPO's z-score with epsilon 1e-6, computed naively per group, for comparison.
std::vector<double> expected_grpo(const std::vector<double>& rewards, const std::vector<std::uint32_t>& ids) {
  std::vector<double> out(rewards.size());
  for (std::size_t i = 0; i < rewards.size(); ++i) {
    double sum = 0.0;
    double count = 0.0;
    for (std::size_t j = 0; j < rewards.size(); ++j) {
      if (ids[j] == ids[i]) {
        sum += rewards[j];
        count += 1.0;
      }
    }
    if (count < 2.0) {
      out[i] = 0.0;
      continue;
    }
    const double mean = sum / count;
    double squares = 0.0;
    for (std::size_t j = 0; j < rewards.size(); ++j) {
      if (ids[j] == ids[i]) squares += (rewards[j] - mean) * (rewards[j] - mean);
    }
    out[i] = (rewards[i] - mean) / (std::sqrt(squares / (count - 1.0)) + 1e-6);
  }
  return out;
}

}  // namespace

TEST_CASE("every layout of group ids gives each group's own ranking", "[workspace][batch]") {
  // Increasing and decreasing runs take the index-free path; the rest fall back to the index after
  // some runs were already written, which the fallback must overwrite.
  const std::vector<std::vector<std::uint32_t>> layouts = {
      {0, 0, 0, 1, 1, 1, 2, 2, 2},           // increasing runs of one size
      {9, 9, 7, 7, 7, 7, 3, 2, 2},           // decreasing, sizes vary (the run-length guess misses)
      {5, 5, 3, 3, 7, 7, 7, 1, 1},           // contiguous but not monotone
      {1, 1, 2, 2, 1, 3, 3, 3, 2},           // ids come back in later runs
      {4, 4, 4, 4, 4, 4, 4, 4, 4},           // one group
      {0, 1, 2, 3, 4, 5, 6, 7, 8},           // groups of one
      {0, 1, 0, 1, 0, 1, 0, 1, 0},           // interleaved
      {0, 0, 1, 1, 2, 2, 3, 3, 0xFFFFFFFFu}  // increasing to the largest id
  };
  for (const KernelOrder& order : {KernelOrder{}, KernelOrder::with_speedup_and_tokens()}) {
    for (const auto& ids : layouts) {
      CAPTURE(ids);
      const auto results = random_results(ids.size(), ids[0] + 17);
      const auto expected = expected_ranks(results, ids, order);
      std::vector<double> out(ids.size(), -9.0);
      leap::rank_advantages(results, ids, std::span<double>(out), order);
      CHECK(out == expected);
      leap::AdvantageWorkspace ws;
      std::vector<double> kept(ids.size(), -9.0);
      leap::rank_advantages(results, ids, std::span<double>(kept), order, ws);
      CHECK(kept == expected);

      std::vector<double> rewards(ids.size());
      for (std::size_t i = 0; i < ids.size(); ++i) rewards[i] = results[i].solved_turn > 0 ? 1.0 : 0.0;
      std::vector<double> grpo(ids.size(), -9.0);
      leap::grpo_advantages(rewards, ids, grpo, {}, ws);
      const auto grpo_expected = expected_grpo(rewards, ids);
      for (std::size_t i = 0; i < ids.size(); ++i) CHECK(grpo[i] == Approx(grpo_expected[i]).margin(1e-12));
    }
  }
}

TEST_CASE("group_std in place: a layout that is not monotone is normalised from unmodified values", "[workspace]") {
  // Runs {5,5} and {3,3} would be scaled in place before the id 5 returns; the check for monotone runs
  // comes first, so the fallback sees the original values.
  const std::vector<std::uint32_t> ids = {5, 5, 3, 3, 5};
  std::vector<double> advantages = {1.0, -1.0, 0.5, -0.5, 0.0};
  std::vector<double> expected = advantages;
  // Group 5 is {1, -1, 0}: mean 0, std 1; group 3 is {0.5, -0.5}: std sqrt(0.5).
  for (std::size_t i : {0u, 1u, 4u}) expected[i] = advantages[i] / (1.0 + 1e-6);
  for (std::size_t i : {2u, 3u}) expected[i] = advantages[i] / (std::sqrt(0.5) + 1e-6);
  leap::normalize_advantages(advantages, ids, leap::AdvantageNormalization::group_std);
  for (std::size_t i = 0; i < ids.size(); ++i) CHECK(advantages[i] == Approx(expected[i]).margin(1e-12));
}

TEST_CASE("one workspace reused across sizes, layouts and functions gives fresh results", "[workspace]") {
  leap::AdvantageWorkspace ws;
  std::mt19937_64 rng(5);
  for (int round = 0; round < 40; ++round) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 700)(rng);
    const std::size_t g = std::uniform_int_distribution<std::size_t>(1, 140)(rng);
    std::vector<std::uint32_t> ids(n);
    for (std::size_t i = 0; i < n; ++i) ids[i] = static_cast<std::uint32_t>(i / g);
    if (round % 2 == 1) std::shuffle(ids.begin(), ids.end(), rng);
    const auto results = random_results(n, static_cast<std::uint64_t>(round));
    const KernelOrder order = round % 3 == 0 ? KernelOrder{} : KernelOrder::with_speedup_and_tokens();
    std::vector<double> out(n);
    leap::rank_advantages(results, ids, std::span<double>(out), order, ws);
    REQUIRE(out == expected_ranks(results, ids, order));
    std::vector<double> scores(n);
    for (std::size_t i = 0; i < n; ++i) scores[i] = results[i].solved_turn > 0 ? 4.0 - results[i].solved_turn : 0.0;
    std::vector<double> by_scores(n);
    leap::rank_advantages_of_scores(scores, ids, by_scores, 0.0, ws);
    REQUIRE(by_scores == expected_ranks(results, ids, KernelOrder{}));  // the published order as a score
  }
  ws.release();
  CHECK_FALSE(ws.busy());
}

namespace {
// An order that ranks another batch inside compare(), through the per-thread workspace or a kept one.
struct NestingOrder {
  leap::AdvantageWorkspace* workspace = nullptr;  // null: the per-thread one
  int compare(const Outcome& a, const Outcome& b) const {
    const std::vector<Outcome> inner = {a, b};
    const std::vector<std::uint32_t> ids = {7, 7};
    std::vector<double> out(2);
    if (workspace != nullptr) {
      leap::rank_advantages(inner, ids, std::span<double>(out), KernelOrder{}, *workspace);
    } else {
      leap::rank_advantages(inner, ids, std::span<double>(out));
    }
    return (out[0] > out[1]) - (out[0] < out[1]);
  }
};
}  // namespace

TEST_CASE("a call nested in a call: the per-thread workspace lends a fresh one, a kept one refuses", "[workspace]") {
  const auto results = random_results(12, 3);
  const std::vector<std::uint32_t> ids(12, 0);
  std::vector<double> out(12);
  leap::rank_advantages(results, ids, std::span<double>(out), NestingOrder{});
  CHECK(out == leap::rank_advantages_reference(results, KernelOrder{}));  // NestingOrder is the published order

  leap::AdvantageWorkspace ws;
  CHECK_THROWS_AS(leap::rank_advantages(results, ids, std::span<double>(out), NestingOrder{&ws}, ws), std::logic_error);
  CHECK_FALSE(ws.busy());  // released on the way out of the throw
  CHECK_NOTHROW(leap::rank_advantages(results, ids, std::span<double>(out), KernelOrder{}, ws));
}

TEST_CASE("results written over the inputs (out = rewards) with ids that are not monotone", "[workspace]") {
  // The first runs look contiguous; the fallback must still read the rewards as they were.
  const std::vector<std::uint32_t> ids = {2, 2, 0, 0, 2, 1, 1, 1};
  const std::vector<double> rewards = {1.0, 0.0, 0.5, 0.25, 1.0, 0.0, 1.0, 1.0};
  std::vector<double> expected(rewards.size());
  leap::grpo_advantages(rewards, ids, expected);
  std::vector<double> in_place = rewards;
  leap::grpo_advantages(in_place, ids, in_place);
  CHECK(in_place == expected);
  leap::rloo_advantages(rewards, ids, expected);
  in_place = rewards;
  leap::rloo_advantages(in_place, ids, in_place);
  CHECK(in_place == expected);
}

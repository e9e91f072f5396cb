// SPDX-License-Identifier: Apache-2.0
// rank_advantages on hand-computed groups, batches and bad input.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "leap/rank_advantage.hpp"

using Catch::Matchers::Contains;
using leap::KernelOrder;
using leap::Outcome;
using leap::Verdict;

namespace {
constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
Outcome solved(int turn, double speedup = not_a_number, std::uint32_t tokens = 0) {
  return Outcome{turn, Verdict::correct, speedup, tokens};
}
Outcome failed(Verdict verdict = Verdict::compile_error, std::uint32_t tokens = 0) {
  return Outcome{0, verdict, not_a_number, tokens};
}
}  // namespace

TEST_CASE("empty group and group of one", "[rank]") {
  CHECK(leap::rank_advantages(std::vector<Outcome>{}).empty());
  CHECK(leap::rank_advantages(std::vector<Outcome>{solved(1, 2.0)}) == std::vector<double>{0.0});
  CHECK(leap::rank_advantages_reference(std::vector<Outcome>{failed()}) == std::vector<double>{0.0});
}

TEST_CASE("LEAP's order by hand: earlier success beats later, any success beats failure", "[rank]") {
  const std::vector<Outcome> group = {solved(1), solved(1), solved(2), failed()};
  // solved(1): ties the other turn-1, beats turn-2 and the failure: (2 - 0) / 3
  // solved(2): loses to both turn-1s, beats the failure: (1 - 2) / 3; failed: (0 - 3) / 3
  const std::vector<double> expected = {2.0 / 3, 2.0 / 3, -1.0 / 3, -1.0};
  CHECK(leap::rank_advantages(group, KernelOrder::turns_only()) == expected);
  CHECK(leap::rank_advantages_reference(group, KernelOrder::turns_only()) == expected);
}

TEST_CASE("the default order is LEAP's: speed and length do not count", "[rank]") {
  const std::vector<Outcome> group = {solved(1, 2.0, 500), solved(1, 1.0, 100), solved(1, 1.02, 50), failed()};
  const std::vector<double> expected = {1.0 / 3, 1.0 / 3, 1.0 / 3, -1.0};
  CHECK(leap::rank_advantages(group) == expected);
  CHECK(leap::rank_advantages(group, KernelOrder::turns_only()) == expected);
  std::vector<double> out(group.size());
  leap::rank_advantages(group, std::vector<std::uint32_t>(group.size(), 1), out);
  CHECK(out == expected);
}

TEST_CASE("with_speedup_and_tokens breaks turn ties by speedup, then tokens", "[rank]") {
  const std::vector<Outcome> group = {solved(1, 2.0, 500), solved(1, 1.0, 100), solved(1, 1.02, 50), failed()};
  // 0 beats 1, 2 (speedup) and 3: +3.  1 vs 2: speedup tie, 2 has fewer tokens: 1 beats 3 only: +1 - 2 = -1.
  // 2 beats 1 and 3, loses to 0: +1.  3 loses to all: -3.
  const std::vector<double> expected = {1.0, -1.0 / 3, 1.0 / 3, -1.0};
  CHECK(leap::rank_advantages(group, KernelOrder::with_speedup_and_tokens()) == expected);
  // with_speedup alone: 1 and 2 tie on speedup and nothing else decides; each beats the failure only.
  CHECK(leap::rank_advantages(group, KernelOrder::with_speedup()) == std::vector<double>{1.0, 0.0, 0.0, -1.0});
}

TEST_CASE("turn_weight by hand: w = 1 published, w = 0 successes tie, w = 0.5 between", "[rank][turn_weight]") {
  // Two turn-1 successes, one turn-2 success (a repair), one failure.
  const std::vector<Outcome> group = {solved(1), solved(1), solved(2), failed()};
  KernelOrder order;
  order.turn_weight = 1.0;  // the repair loses to both turn-1s: (1 - 2) / 3
  CHECK(leap::rank_advantages(group, order) == std::vector<double>{2.0 / 3, 2.0 / 3, -1.0 / 3, -1.0});
  order.turn_weight = 0.0;  // all successes tie: each beats the failure only
  CHECK(leap::rank_advantages(group, order) == std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3, -1.0});
  CHECK(leap::rank_advantages_reference(group, order) == std::vector<double>{1.0 / 3, 1.0 / 3, 1.0 / 3, -1.0});
  order.turn_weight = 0.5;  // the repair: (1 - 0.5 - 0.5) / 3 = 0; a turn-1: (0.5 + 1) / 3
  CHECK(leap::rank_advantages(group, order) == std::vector<double>{0.5, 0.5, 0.0, -1.0});
  CHECK(leap::rank_advantages_reference(group, order) == std::vector<double>{0.5, 0.5, 0.0, -1.0});
}

TEST_CASE("turn_weight in a batch on every path: one group per path", "[rank][turn_weight][batch]") {
  // Sizes 8 (stack), 40 (vectorised) and 200 (sorted), interleaved, at w = 0.25.
  KernelOrder order;
  order.turn_weight = 0.25;
  std::vector<Outcome> results;
  std::vector<std::uint32_t> ids;
  std::vector<std::vector<Outcome>> groups;
  for (std::size_t size : {8u, 40u, 200u}) {
    std::vector<Outcome> group;
    for (std::size_t i = 0; i < size; ++i) group.push_back(i % 4 == 3 ? failed() : solved(static_cast<int>(i % 4) + 1));
    groups.push_back(group);
  }
  for (std::size_t i = 0; i < 200; ++i) {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (i < groups[g].size()) {
        results.push_back(groups[g][i]);
        ids.push_back(static_cast<std::uint32_t>(g));
      }
    }
  }
  std::vector<double> out(results.size());
  leap::rank_advantages(results, ids, out, order);
  std::vector<std::size_t> next(groups.size(), 0);
  for (std::size_t k = 0; k < results.size(); ++k) {
    const auto& group = groups[ids[k]];
    const auto oracle = leap::rank_advantages_reference(group, order);
    CHECK(out[k] == Approx(oracle[next[ids[k]]++]).margin(1e-12));
  }
}

TEST_CASE("an all-tied group gets zero everywhere", "[rank]") {
  CHECK(leap::rank_advantages(std::vector<Outcome>(8, failed())) == std::vector<double>(8, 0.0));
  CHECK(leap::rank_advantages(std::vector<Outcome>(100, solved(2, 1.5, 7))) == std::vector<double>(100, 0.0));
}

TEST_CASE("a non-transitive cycle scores zero for each member", "[rank]") {
  const std::vector<Outcome> group = {solved(1, 1.00, 100), solved(1, 1.04, 200), solved(1, 1.08, 300)};
  CHECK(leap::rank_advantages(group, KernelOrder::with_speedup_and_tokens()) == std::vector<double>{0.0, 0.0, 0.0});
}

TEST_CASE("batched: arbitrary ids, groups interleaved, each ranked on its own", "[rank][batch]") {
  const std::vector<Outcome> results = {solved(1), failed(), solved(2), solved(1), failed(), failed()};
  const std::vector<std::uint32_t> ids = {0xFFFFFFFFu, 7, 0xFFFFFFFFu, 7, 7, 42};
  std::vector<double> out(results.size(), 99.0);
  leap::rank_advantages(results, ids, out, KernelOrder::turns_only());
  // group 0xFFFFFFFF: {solved(1), solved(2)} -> +1, -1; group 7: {failed, solved(1), failed} -> -0.5, +1, -0.5
  CHECK(out == std::vector<double>{1.0, -0.5, -1.0, 1.0, -0.5, 0.0});
}

TEST_CASE("batched: contiguous groups in any id order match per-group results", "[rank][batch]") {
  const std::vector<Outcome> a = {solved(1, 1.0), solved(1, 3.0), failed()};
  const std::vector<Outcome> b = {failed(), solved(3, 2.0)};
  std::vector<Outcome> results = a;
  results.insert(results.end(), b.begin(), b.end());
  for (const std::vector<std::uint32_t>& ids :
       {std::vector<std::uint32_t>{5, 5, 5, 2, 2}, std::vector<std::uint32_t>{2, 2, 2, 5, 5},
        std::vector<std::uint32_t>{9, 9, 9, 3, 3}}) {
    std::vector<double> out(results.size());
    leap::rank_advantages(results, ids, out);
    std::vector<double> expected = leap::rank_advantages(a);
    const std::vector<double> second = leap::rank_advantages(b);
    expected.insert(expected.end(), second.begin(), second.end());
    CHECK(out == expected);
  }
}

TEST_CASE("batched: float output equals the double output rounded", "[rank][batch]") {
  const std::vector<Outcome> results = {solved(1), solved(2, 1.0), solved(2, 2.0), failed(), failed(Verdict::timeout)};
  const std::vector<std::uint32_t> ids(results.size(), 3);
  std::vector<double> as_double(results.size());
  std::vector<float> as_float(results.size());
  leap::rank_advantages(results, ids, as_double);
  leap::rank_advantages(results, ids, as_float);
  for (std::size_t i = 0; i < results.size(); ++i) CHECK(as_float[i] == static_cast<float>(as_double[i]));
}

TEST_CASE("batched: an empty batch is fine", "[rank][batch]") {
  std::vector<double> out;
  leap::rank_advantages(std::vector<Outcome>{}, std::vector<std::uint32_t>{}, out);
  CHECK(out.empty());
}

TEST_CASE("a custom order works through the pairwise path", "[rank]") {
  struct FewestTokens {  // a trainer's own order: fewer tokens always wins
    int compare(const Outcome& a, const Outcome& b) const { return (a.tokens < b.tokens) - (a.tokens > b.tokens); }
  };
  const std::vector<Outcome> group = {failed(Verdict::compile_error, 30), solved(1, 2.0, 10),
                                      failed(Verdict::timeout, 20)};
  const std::vector<double> expected = {-1.0, 1.0, 0.0};
  CHECK(leap::rank_advantages(group, FewestTokens{}) == expected);
  CHECK(leap::rank_advantages_reference(group, FewestTokens{}) == expected);
}

TEST_CASE("bad input: a clear invalid_argument, and nothing written", "[rank][errors]") {
  const std::vector<Outcome> results = {solved(1), failed(), solved(2)};
  std::vector<double> out(3, 7.0);
  SECTION("group_ids shorter than results") {
    const std::vector<std::uint32_t> ids = {0, 0};
    CHECK_THROWS_WITH(leap::rank_advantages(results, ids, out), Contains("group_ids.size() (2) != results.size() (3)"));
  }
  SECTION("out shorter than results") {
    const std::vector<std::uint32_t> ids = {0, 0, 0};
    std::vector<double> short_out(2, 7.0);
    CHECK_THROWS_WITH(leap::rank_advantages(results, ids, short_out), Contains("out.size() (2) != results.size() (3)"));
    CHECK(short_out == std::vector<double>(2, 7.0));
  }
  SECTION("a negative turn") {
    std::vector<Outcome> bad = results;
    bad[2].solved_turn = -1;
    const std::vector<std::uint32_t> ids = {0, 0, 0};
    CHECK_THROWS_AS(leap::rank_advantages(bad, ids, out), std::invalid_argument);
    CHECK_THROWS_WITH(leap::rank_advantages(bad, ids, out),
                      Contains("outcome 2") && Contains("negative solved_turn (-1)"));
    CHECK_THROWS_WITH(leap::rank_advantages_reference(bad), Contains("negative solved_turn"));
  }
  SECTION("a NaN tolerance") {
    KernelOrder order;
    order.speedup_tolerance = not_a_number;
    const std::vector<std::uint32_t> ids = {0, 0, 0};
    CHECK_THROWS_WITH(leap::rank_advantages(results, ids, out, order), Contains("speedup_tolerance is NaN"));
    CHECK_THROWS_AS(leap::rank_advantages(results, order), std::invalid_argument);
  }
  SECTION("a turn weight outside [0, 1]") {
    KernelOrder order;
    order.turn_weight = 2.0;
    const std::vector<std::uint32_t> ids = {0, 0, 0};
    CHECK_THROWS_WITH(leap::rank_advantages(results, ids, out, order), Contains("turn_weight (2)"));
    CHECK_THROWS_WITH(leap::rank_advantages_reference(results, order), Contains("outside [0, 1]"));
  }
  CHECK(out == std::vector<double>(3, 7.0));
}

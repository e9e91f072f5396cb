// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "leap/baselines.hpp"

using Catch::Matchers::Contains;

TEST_CASE("GRPO z-score uses the unbiased std plus epsilon", "[baselines]") {
  const std::vector<double> rewards = {1, 0, 0, 1};
  const std::vector<std::uint32_t> ids(4, 0);
  std::vector<double> out(4);
  leap::grpo_advantages(rewards, ids, out);
  const double std_unbiased = std::sqrt(1.0 / 3.0);  // sum of squares 1, over n - 1 = 3
  const double expected = 0.5 / (std_unbiased + 1e-6);
  CHECK(out[0] == Approx(expected).epsilon(1e-12));
  CHECK(out[1] == Approx(-expected).epsilon(1e-12));
  CHECK(out[3] == Approx(expected).epsilon(1e-12));
}

TEST_CASE("Dr.GRPO is r - mean", "[baselines]") {
  const std::vector<double> rewards = {3, 1, 2};
  const std::vector<std::uint32_t> ids(3, 4);
  std::vector<double> out(3);
  leap::grpo_advantages(rewards, ids, out, {.epsilon = 1e-6, .scale_by_std = false});
  CHECK(out == std::vector<double>{1.0, -1.0, 0.0});
}

TEST_CASE("RLOO subtracts the mean of the other members", "[baselines]") {
  const std::vector<double> rewards = {1, 0, 0, 1};
  const std::vector<std::uint32_t> ids(4, 0);
  std::vector<double> out(4);
  leap::rloo_advantages(rewards, ids, out);
  CHECK(out[0] == Approx(1.0 - 1.0 / 3.0));
  CHECK(out[1] == Approx(0.0 - 2.0 / 3.0));
}

TEST_CASE("a group of one has no baseline, an all-equal group gets zero", "[baselines]") {
  const std::vector<double> rewards = {5, 2, 2, 2};
  const std::vector<std::uint32_t> ids = {1, 2, 2, 2};
  std::vector<double> out(4, 9.0);
  leap::grpo_advantages(rewards, ids, out);
  CHECK(out == std::vector<double>(4, 0.0));
  out.assign(4, 9.0);
  leap::grpo_advantages(rewards, ids, out, {.epsilon = 0.0, .scale_by_std = true});
  CHECK(out == std::vector<double>(4, 0.0));
  out.assign(4, 9.0);
  leap::rloo_advantages(rewards, ids, out);
  CHECK(out == std::vector<double>(4, 0.0));
}

TEST_CASE("baselines batch over interleaved groups and offer float", "[baselines][batch]") {
  const std::vector<double> rewards = {1, 10, 0, 30, 1, 20};
  const std::vector<std::uint32_t> ids = {7, 3, 7, 3, 7, 3};
  std::vector<double> out(6);
  leap::grpo_advantages(rewards, ids, out, {.epsilon = 0.0, .scale_by_std = false});
  CHECK(out[0] == Approx(1.0 / 3.0));
  CHECK(out[2] == Approx(-2.0 / 3.0));
  CHECK(out[1] == Approx(-10.0));
  CHECK(out[3] == Approx(10.0));
  CHECK(out[5] == Approx(0.0).margin(1e-12));

  const std::vector<float> rewards_f(rewards.begin(), rewards.end());
  std::vector<float> out_f(6);
  leap::rloo_advantages(rewards_f, ids, out_f);
  std::vector<double> out_d(6);
  leap::rloo_advantages(rewards, ids, out_d);
  for (std::size_t i = 0; i < 6; ++i) CHECK(out_f[i] == static_cast<float>(out_d[i]));
}

TEST_CASE("baselines refuse bad input with names and values", "[baselines][errors]") {
  const std::vector<std::uint32_t> ids(3, 0);
  std::vector<double> out(3, 4.0);
  CHECK_THROWS_WITH(leap::rloo_advantages(std::vector<double>{1, 2}, ids, out),
                    Contains("group_ids.size() (3) != rewards.size() (2)"));
  CHECK_THROWS_WITH(leap::grpo_advantages(std::vector<double>{1, 2, 3}, ids, out, {.epsilon = -1.0}),
                    Contains("options.epsilon (-1)"));
  CHECK(out == std::vector<double>(3, 4.0));
}

// A non-finite reward is found in the pass that computes (one probe per group), so out may hold
// results by the time the error names it; rewards themselves are never lost, also in place.
TEST_CASE("baselines name a non-finite reward wherever it sits, and keep rewards intact in place",
          "[baselines][errors]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::nan("");
  for (const std::size_t group : {1u, 3u, 4u, 8u, 16u}) {
    for (const double bad : {nan, inf, -inf}) {
      const std::size_t rows = 4 * group;
      std::vector<std::uint32_t> ids(rows);
      for (std::size_t i = 0; i < rows; ++i) ids[i] = static_cast<std::uint32_t>(i / group);
      std::vector<double> rewards(rows);
      for (std::size_t i = 0; i < rows; ++i) rewards[i] = static_cast<double>(i % 3);
      const std::size_t at = rows - group / 2 - 1;  // in the last group
      rewards[at] = bad;
      const std::string culprit = "rewards[" + std::to_string(at) + "]";
      INFO("group " << group << ", bad " << bad);
      std::vector<double> out(rows);
      CHECK_THROWS_WITH(leap::grpo_advantages(rewards, ids, out), Contains(culprit) && Contains("is not finite"));
      CHECK_THROWS_WITH(leap::rloo_advantages(rewards, ids, out), Contains(culprit) && Contains("is not finite"));
      std::vector<double> in_place = rewards;
      CHECK_THROWS_WITH(leap::grpo_advantages(in_place, ids, in_place), Contains(culprit));
      CHECK_THROWS_WITH(leap::rloo_advantages(in_place, ids, in_place), Contains(culprit));
      for (std::size_t i = 0; i < rows; ++i) {
        if (i != at) CHECK(in_place[i] == rewards[i]);
      }
      std::vector<float> rewards_f(rewards.begin(), rewards.end());
      std::vector<float> out_f(rows);
      CHECK_THROWS_WITH(leap::grpo_advantages(rewards_f, ids, out_f), Contains(culprit));
    }
  }
}

TEST_CASE("baselines accept finite rewards whose group sum overflows", "[baselines][errors]") {
  const double big = std::numeric_limits<double>::max();
  const std::vector<double> rewards(8, big);
  const std::vector<std::uint32_t> ids(8, 0);
  std::vector<double> out(8, 1.0);
  CHECK_NOTHROW(leap::rloo_advantages(rewards, ids, out));
  CHECK_NOTHROW(leap::grpo_advantages(rewards, ids, out));
}

// Groups of 4, 8 and 16 are summed in a fixed tree; the scalar order (other compilers) must give
// the same bits as the SIMD lanes, and every path (contiguous runs, interleaved ids, a batch whose
// groups change size) the same results.
TEST_CASE("fixed-size group sums agree bit for bit between lanes and scalar order", "[baselines]") {
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  const auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(static_cast<std::int64_t>(state >> 11)) * 0x1p-40;
  };
  for (int trial = 0; trial < 200; ++trial) {
    double four[4], eight[8], sixteen[16];
    for (double& v : four) v = next();
    for (double& v : eight) v = next() * 1e-6;
    for (double& v : sixteen) v = next() * 1e6;
    CHECK(leap::detail::group_sum(four) ==
          leap::detail::balanced_sum<2>(four, 2) + leap::detail::balanced_sum<2>(four + 1, 2));
    CHECK(leap::detail::group_sum(eight) ==
          leap::detail::balanced_sum<4>(eight, 2) + leap::detail::balanced_sum<4>(eight + 1, 2));
    CHECK(leap::detail::group_sum(sixteen) ==
          leap::detail::balanced_sum<8>(sixteen, 2) + leap::detail::balanced_sum<8>(sixteen + 1, 2));
  }
}

TEST_CASE("baselines give the same bits on every path through a batch", "[baselines][batch]") {
  // Groups of 8, then one of 3 and one of 16: the loop compiled for 8 meets other sizes.
  const std::vector<std::size_t> sizes = {8, 8, 3, 8, 16, 8, 1, 8};
  std::vector<std::uint32_t> contiguous;
  std::vector<double> rewards;
  for (std::size_t g = 0; g < sizes.size(); ++g) {
    for (std::size_t k = 0; k < sizes[g]; ++k) {
      contiguous.push_back(static_cast<std::uint32_t>(g));
      rewards.push_back(std::sin(static_cast<double>(rewards.size()) * 1.7) * 3.0);
    }
  }
  const std::size_t rows = rewards.size();
  // The same groups dealt round-robin (member k of every group, then member k + 1): ids are no longer
  // runs, and each group's members keep their order, which the sums depend on.
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < 16; ++k) {
    std::size_t offset = 0;
    for (const std::size_t size : sizes) {
      if (k < size) order.push_back(offset + k);
      offset += size;
    }
  }
  REQUIRE(order.size() == rows);
  std::vector<std::uint32_t> shuffled_ids(rows);
  std::vector<double> shuffled(rows);
  for (std::size_t i = 0; i < rows; ++i) {
    shuffled_ids[i] = contiguous[order[i]];
    shuffled[i] = rewards[order[i]];
  }
  for (const bool grpo : {true, false}) {
    std::vector<double> a(rows), b(rows);
    if (grpo) {
      leap::grpo_advantages(rewards, contiguous, a);
      leap::grpo_advantages(shuffled, shuffled_ids, b);
    } else {
      leap::rloo_advantages(rewards, contiguous, a);
      leap::rloo_advantages(shuffled, shuffled_ids, b);
    }
    for (std::size_t i = 0; i < rows; ++i) CHECK(b[i] == a[order[i]]);
    // A group of 8 by hand, in the documented tree order.
    double values[8];
    for (std::size_t k = 0; k < 8; ++k) values[k] = rewards[k];
    const double sum =
        ((values[0] + values[2]) + (values[4] + values[6])) + ((values[1] + values[3]) + (values[5] + values[7]));
    if (grpo) {
      const double mean = sum / 8.0;
      double squares[8];
      for (std::size_t k = 0; k < 8; ++k) squares[k] = (values[k] - mean) * (values[k] - mean);
      const double q = ((squares[0] + squares[2]) + (squares[4] + squares[6])) +
                       ((squares[1] + squares[3]) + (squares[5] + squares[7]));
      const double scale = 1.0 / (std::sqrt(q / 7.0) + 1e-6);
      for (std::size_t k = 0; k < 8; ++k) CHECK(a[k] == (values[k] - mean) * scale);
    } else {
      for (std::size_t k = 0; k < 8; ++k) CHECK(a[k] == values[k] - (sum - values[k]) / 7.0);
    }
    // The group of 3 (rows 16 to 18) is summed left to right.
    const double sum3 = (rewards[16] + rewards[17]) + rewards[18];
    for (std::size_t k = 16; k < 19; ++k) {
      if (grpo) {
        const double mean = sum3 / 3.0;
        double q = 0.0;
        for (std::size_t j = 16; j < 19; ++j) q += (rewards[j] - mean) * (rewards[j] - mean);
        CHECK(a[k] == (rewards[k] - mean) * (1.0 / (std::sqrt(q / 2.0) + 1e-6)));
      } else {
        CHECK(a[k] == rewards[k] - (sum3 - rewards[k]) / 2.0);
      }
    }
    CHECK(a[51] == 0.0);  // the group of one
  }
}

// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
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
  CHECK_THROWS_WITH(leap::grpo_advantages(std::vector<double>{1, std::nan(""), 0}, ids, out),
                    Contains("rewards[1] (nan) is not finite"));
  CHECK_THROWS_WITH(leap::rloo_advantages(std::vector<double>{1, 2}, ids, out),
                    Contains("group_ids.size() (3) != rewards.size() (2)"));
  CHECK_THROWS_WITH(leap::grpo_advantages(std::vector<double>{1, 2, 3}, ids, out, {.epsilon = -1.0}),
                    Contains("options.epsilon (-1)"));
  CHECK(out == std::vector<double>(3, 4.0));
}

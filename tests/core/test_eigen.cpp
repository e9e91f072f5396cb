// SPDX-License-Identifier: Apache-2.0
// The Eigen overloads write into the trainer's own vectors, with no copies.
#include <Eigen/Core>
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "leap/eigen.hpp"

using leap::Outcome;
using leap::Verdict;

namespace {
const std::vector<Outcome> results = {{1, Verdict::correct, 2.0, 10},
                                      {0, Verdict::wrong_answer, NAN, 5},
                                      {2, Verdict::correct, 1.0, 9},
                                      {1, Verdict::correct, 1.0, 12}};
const std::vector<std::uint32_t> ids = {0, 0, 1, 1};
}  // namespace

TEST_CASE("rank advantages into VectorXd, a Map over a trainer buffer, a segment and VectorXf", "[eigen]") {
  std::vector<double> expected(4);
  leap::rank_advantages(results, ids, expected);

  Eigen::VectorXd vector(4);
  leap::rank_advantages(results, ids, vector);
  for (int i = 0; i < 4; ++i) CHECK(vector[i] == expected[static_cast<std::size_t>(i)]);

  std::vector<double> trainer_buffer(6, -5.0);
  Eigen::Map<Eigen::VectorXd> mapped(trainer_buffer.data() + 1, 4);
  leap::rank_advantages(results, ids, mapped);
  CHECK(trainer_buffer[0] == -5.0);
  CHECK(trainer_buffer[5] == -5.0);
  for (std::size_t i = 0; i < 4; ++i) CHECK(trainer_buffer[i + 1] == expected[i]);

  Eigen::VectorXd longer = Eigen::VectorXd::Constant(10, 3.0);
  leap::rank_advantages(results, ids, longer.segment(2, 4));
  CHECK(longer[1] == 3.0);
  CHECK(longer[2] == expected[0]);

  Eigen::VectorXf as_float(4);
  leap::rank_advantages(results, ids, as_float, leap::KernelOrder::turns_only());
  std::vector<float> expected_float(4);
  leap::rank_advantages(results, ids, expected_float, leap::KernelOrder::turns_only());
  for (int i = 0; i < 4; ++i) CHECK(as_float[i] == expected_float[static_cast<std::size_t>(i)]);

  Eigen::ArrayXd array(4);
  leap::rank_advantages(results, ids, array.matrix());
  CHECK(array[0] == expected[0]);
}

TEST_CASE("baselines on Eigen vectors", "[eigen]") {
  Eigen::VectorXd rewards(4);
  rewards << 1, 0, 3, 1;
  Eigen::VectorXd out(4);
  leap::grpo_advantages(rewards, ids, out, {.epsilon = 0.0, .scale_by_std = false});
  CHECK(out[0] == Approx(0.5));
  CHECK(out[3] == Approx(-1.0));
  Eigen::VectorXf rewards_f = rewards.cast<float>();
  Eigen::VectorXf out_f(4);
  leap::rloo_advantages(rewards_f, ids, out_f);
  CHECK(out_f[2] == Approx(2.0f));
}

TEST_CASE("a wrongly sized Eigen output is refused", "[eigen][errors]") {
  Eigen::VectorXd out(3);
  CHECK_THROWS_WITH(leap::rank_advantages(results, ids, out), Catch::Contains("out.size() (3) != results.size() (4)"));
}

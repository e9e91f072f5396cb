// SPDX-License-Identifier: Apache-2.0
// The opt-in adapters from an installed leap: advantages written into an Eigen vector the trainer
// holds, and an outcome logged as JSON and read back.
#include <leap/eigen.hpp>
#include <leap/json.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  using leap::Verdict;
  const std::vector<leap::Outcome> results = {{1, Verdict::correct, 1.4, 700}, {0, Verdict::timeout, NAN, 900}};
  const std::vector<std::uint32_t> prompt_of = {0, 0};
  Eigen::VectorXf advantages(2);
  leap::rank_advantages(results, prompt_of, advantages);

  const nlohmann::json logged = results[0];
  const auto back = logged.get<leap::Outcome>();
  std::printf("adapters: advantages %+.3f %+.3f, outcome %s\n", static_cast<double>(advantages[0]),
              static_cast<double>(advantages[1]), logged.dump().c_str());
  return advantages[0] > 0 && advantages[1] < 0 && back.speedup == results[0].speedup ? 0 : 1;
}

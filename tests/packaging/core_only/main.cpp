// SPDX-License-Identifier: Apache-2.0
// The rank advantage with nothing but the standard library: no header of the core may pull Eigen or
// nlohmann/json in (their version macros would be defined).
#include <leap/rank_advantage.hpp>

#if defined(EIGEN_WORLD_VERSION) || defined(NLOHMANN_JSON_VERSION_MAJOR)
#error "a core header included Eigen or nlohmann/json"
#endif

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  using leap::Verdict;
  const std::vector<leap::Outcome> results = {
      {1, Verdict::correct, 1.5, 700},
      {0, Verdict::compile_error, NAN, 900},
      {2, Verdict::correct, 1.1, 650},
      {0, Verdict::wrong_answer, NAN, 800},
  };
  const std::vector<std::uint32_t> prompt_of = {0, 0, 0, 0};
  std::vector<float> advantages(results.size());
  leap::rank_advantages(results, prompt_of, advantages);
  double sum = 0;
  for (const float a : advantages) sum += static_cast<double>(a);
  std::printf("core only: advantages %+.3f %+.3f %+.3f %+.3f, sum %.2g\n", static_cast<double>(advantages[0]),
              static_cast<double>(advantages[1]), static_cast<double>(advantages[2]),
              static_cast<double>(advantages[3]), sum);
  // LEAP as published: solved on turn 1 beats solved on turn 2 beats unsolved (every failure alike),
  // and a group's advantages sum to zero.
  const bool ordered = advantages[0] > advantages[2] && advantages[2] > advantages[1] && advantages[1] == advantages[3];
  return ordered && std::abs(sum) < 1e-6 ? 0 : 1;
}

// SPDX-License-Identifier: Apache-2.0
// A trainer's view of leap: its own flat buffers of one step's results, one call, advantages out.
#include <leap/leap.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  using leap::Verdict;
  // Two prompts, four samples each, laid out however the trainer likes: here interleaved.
  const std::vector<leap::Outcome> results = {
      {1, Verdict::correct, 1.8, 700}, {0, Verdict::compile_error, NAN, 900}, {2, Verdict::correct, 1.1, 1500},
      {1, Verdict::correct, 1.2, 650}, {0, Verdict::wrong_answer, NAN, 800},  {0, Verdict::timeout, NAN, 1000},
      {1, Verdict::correct, 1.0, 640}, {1, Verdict::correct, 1.21, 600},
  };
  const std::vector<std::uint32_t> prompt_of = {0, 1, 0, 1, 0, 1, 0, 1};
  std::vector<float> advantages(results.size());  // e.g. the trainer's float advantage buffer

  leap::rank_advantages(results, prompt_of, advantages);  // KernelOrder{}: LEAP as published; no copies

  double sum[2] = {0, 0};
  for (std::size_t i = 0; i < results.size(); ++i) {
    std::printf("sample %zu (prompt %u): advantage %+.3f\n", i, prompt_of[i], static_cast<double>(advantages[i]));
    sum[prompt_of[i]] += static_cast<double>(advantages[i]);
  }
  std::printf("leap %s: per-prompt sums %.2g and %.2g\n", leap::version_string, sum[0], sum[1]);
  return std::abs(sum[0]) < 1e-6 && std::abs(sum[1]) < 1e-6 ? 0 : 1;
}

// Oracle: torch.nn.functional.group_norm(x, groups, weight, bias, eps) for x of shape
// [batch, channels, height, width]: statistics per (image, group of channels / groups adjacent
// channels), biased variance, then a per-channel scale and shift, in double.
#include <leap/oracle.hpp>

#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t batch = problem.size("batch"), groups = problem.size("groups"), cpg = problem.size("group_channels");
  const std::int64_t channels = groups * cpg, hw = problem.size("height") * problem.size("width");
  const double eps = problem.scalar("eps");
  const auto x = problem.in("x");
  const auto weight = problem.in("weight");
  const auto bias = problem.in("bias");
  auto out = problem.out("out");
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t g = 0; g < groups; ++g) {
      double sum = 0.0, count = 0.0;
      for (std::int64_t c = g * cpg; c < (g + 1) * cpg; ++c)
        for (std::int64_t j = 0; j < hw; ++j) {
          sum += x[(n * channels + c) * hw + j];
          count += 1.0;
        }
      const double mean = sum / count;
      double sq = 0.0;
      for (std::int64_t c = g * cpg; c < (g + 1) * cpg; ++c)
        for (std::int64_t j = 0; j < hw; ++j) {
          const double d = x[(n * channels + c) * hw + j] - mean;
          sq += d * d;
        }
      const double inv = 1.0 / std::sqrt(sq / count + eps);
      for (std::int64_t c = g * cpg; c < (g + 1) * cpg; ++c)
        for (std::int64_t j = 0; j < hw; ++j) {
          const std::int64_t at = (n * channels + c) * hw + j;
          out[at] = (x[at] - mean) * inv * weight[c] + bias[c];
        }
    }
}

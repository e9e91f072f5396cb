// Oracle: x / sqrt(mean(x^2, dim=1, keepdim=True) + eps) for x of shape [batch, features, height,
// width] (KernelBench's RMSNorm: the root mean square over the features at each position), in double.
#include <leap/oracle.hpp>

#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t batch = problem.size("batch"), features = problem.size("features");
  const std::int64_t hw = problem.size("height") * problem.size("width");
  const double eps = problem.scalar("eps");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t j = 0; j < hw; ++j) {
      double sq = 0.0;
      for (std::int64_t c = 0; c < features; ++c) sq += x[(n * features + c) * hw + j] * x[(n * features + c) * hw + j];
      const double rms = std::sqrt(sq / static_cast<double>(features) + eps);
      for (std::int64_t c = 0; c < features; ++c) out[(n * features + c) * hw + j] = x[(n * features + c) * hw + j] / rms;
    }
}

// Oracle: torch.nn.functional.layer_norm(x, (features, height, width), weight, bias, eps) for x of
// shape [batch, features, height, width]: each sample normalised over its last three dimensions
// (biased variance), then scaled and shifted elementwise, in double.
#include <leap/oracle.hpp>

#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t batch = problem.size("batch");
  const std::int64_t m = problem.size("features") * problem.size("height") * problem.size("width");
  const double eps = problem.scalar("eps");
  const auto x = problem.in("x");
  const auto weight = problem.in("weight");
  const auto bias = problem.in("bias");
  auto out = problem.out("out");
  for (std::int64_t n = 0; n < batch; ++n) {
    double sum = 0.0;
    for (std::int64_t k = 0; k < m; ++k) sum += x[n * m + k];
    const double mean = sum / static_cast<double>(m);
    double sq = 0.0;
    for (std::int64_t k = 0; k < m; ++k) sq += (x[n * m + k] - mean) * (x[n * m + k] - mean);
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(m) + eps);
    for (std::int64_t k = 0; k < m; ++k) out[n * m + k] = (x[n * m + k] - mean) * inv * weight[k] + bias[k];
  }
}

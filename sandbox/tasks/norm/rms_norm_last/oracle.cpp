// Oracle: RMSNorm over the last dimension in double, from the formula x / sqrt(mean(x^2) + eps) * w.
#include <leap/oracle.hpp>

#include <cmath>

LEAP_ORACLE(problem) {
  const auto rows = problem.size("rows");
  const auto cols = problem.size("cols");
  const double eps = problem.scalar("eps");
  const auto x = problem.in("x");
  const auto weight = problem.in("weight");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum_sq = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) sum_sq += x[r * cols + c] * x[r * cols + c];
    const double rms = std::sqrt(sum_sq / static_cast<double>(cols) + eps);
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = x[r * cols + c] / rms * weight[c];
  }
}

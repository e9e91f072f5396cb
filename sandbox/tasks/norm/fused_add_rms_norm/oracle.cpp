// Oracle: residual += x, then RMSNorm of the new residual over the last dimension, in double.
#include <leap/oracle.hpp>

#include <cmath>

LEAP_ORACLE(problem) {
  const auto rows = problem.size("rows");
  const auto cols = problem.size("cols");
  const double eps = problem.scalar("eps");
  const auto x = problem.in("x");
  const auto weight = problem.in("weight");
  auto residual = problem.out("residual");  // arrives holding the drawn residual
  auto out = problem.out("out");
  for (std::int64_t i = 0; i < rows * cols; ++i) residual[i] += x[i];
  for (std::int64_t r = 0; r < rows; ++r) {
    double mean_sq = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) mean_sq += residual[r * cols + c] * residual[r * cols + c];
    mean_sq /= static_cast<double>(cols);
    const double scale = 1.0 / std::sqrt(mean_sq + eps);
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = residual[r * cols + c] * scale * weight[c];
  }
}

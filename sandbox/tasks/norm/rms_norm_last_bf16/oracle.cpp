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
    const double* row = x.data() + r * cols;
    double mean_sq = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) mean_sq += row[c] * row[c];
    mean_sq /= static_cast<double>(cols);
    const double scale = 1.0 / std::sqrt(mean_sq + eps);
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = row[c] * scale * weight[c];
  }
}

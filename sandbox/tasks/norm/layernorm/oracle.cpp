// Oracle: layer normalisation of each row, biased variance, then the affine map gamma, beta; in double.
#include <leap/oracle.hpp>

#include <cmath>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), cols = problem.size("cols");
  const auto x = problem.in("x");
  const auto gamma = problem.in("gamma");
  const auto beta = problem.in("beta");
  const double eps = problem.scalar("eps");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = x.data() + r * cols;
    double mean = 0;
    for (std::int64_t c = 0; c < cols; ++c) mean += row[c];
    mean /= static_cast<double>(cols);
    double var = 0;
    for (std::int64_t c = 0; c < cols; ++c) var += (row[c] - mean) * (row[c] - mean);
    var /= static_cast<double>(cols);
    const double scale = 1.0 / std::sqrt(var + eps);
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = (row[c] - mean) * scale * gamma[c] + beta[c];
  }
}

// Oracle: torch.nn.functional.layer_norm(x, (cols,), weight, bias, eps) on a rows x cols bfloat16
// matrix, computed in double from the bfloat16 values (the output's rounding is left to the tolerance).
#include <leap/oracle.hpp>

#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), cols = problem.size("cols");
  const double eps = problem.scalar("eps");
  const auto x = problem.in("x");
  const auto weight = problem.in("weight");
  const auto bias = problem.in("bias");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) sum += x[r * cols + c];
    const double mean = sum / static_cast<double>(cols);
    double sq = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) sq += (x[r * cols + c] - mean) * (x[r * cols + c] - mean);
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(cols) + eps);
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = (x[r * cols + c] - mean) * inv * weight[c] + bias[c];
  }
}

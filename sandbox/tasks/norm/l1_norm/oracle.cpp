// Oracle: x / torch.sum(torch.abs(x), dim=1, keepdim=True) for a rows x cols matrix, row by row in double.
#include <leap/oracle.hpp>

#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), cols = problem.size("cols");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) s += std::abs(x[r * cols + c]);
    const double norm = s;
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = x[r * cols + c] / norm;
  }
}

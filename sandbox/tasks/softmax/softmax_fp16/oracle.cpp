// Oracle: torch.softmax(x, dim=1) of a rows x cols half matrix, in double (the output's rounding to
// half is left to the tolerance).
#include <leap/oracle.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), cols = problem.size("cols");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = x.data() + r * cols;
    const double m = *std::max_element(row, row + cols);
    double s = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) s += std::exp(row[c] - m);
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = std::exp(row[c] - m) / s;
  }
}

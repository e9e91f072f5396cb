// Oracle: torch.log_softmax(x, dim=1) for a rows x cols matrix, in double: x - max - log(sum(exp(x - max))).
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
    const double lse = m + std::log(s);
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = row[c] - lse;
  }
}

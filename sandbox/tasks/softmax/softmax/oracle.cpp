// Oracle: softmax over each row, exp(x - max) / sum exp(x - max), in double.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cmath>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), cols = problem.size("cols");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = x.data() + r * cols;
    const double top = *std::max_element(row, row + cols);
    double sum = 0;
    for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(row[c] - top);
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = std::exp(row[c] - top) / sum;
  }
}

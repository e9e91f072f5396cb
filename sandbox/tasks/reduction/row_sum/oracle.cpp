// Oracle: the sum of each row (torch.sum(x, dim=1)), in double.
#include <leap/oracle.hpp>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), cols = problem.size("cols");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::int64_t c = 0; c < cols; ++c) sum += x[r * cols + c];
    out[r] = sum;
  }
}

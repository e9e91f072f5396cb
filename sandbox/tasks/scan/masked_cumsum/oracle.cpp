// Oracle: torch.cumsum(x * mask, dim=1) (bool mask as int32 0/1), row by row in double.
#include <leap/oracle.hpp>

#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), cols = problem.size("cols");
  const auto x = problem.in("x");
  const auto mask = problem.in("mask");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) {
      if (mask[r * cols + c] != 0.0) s += x[r * cols + c];
      out[r * cols + c] = s;
    }
  }
}

// Oracle: torch.cumsum(x.flip(1), dim=1).flip(1), row by row in double.
#include <leap/oracle.hpp>

#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), cols = problem.size("cols");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (std::int64_t c = cols - 1; c >= 0; --c) {
      s += x[r * cols + c];
      out[r * cols + c] = s;
    }
  }
}

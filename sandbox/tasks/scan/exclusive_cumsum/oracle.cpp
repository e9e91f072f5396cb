// Oracle: torch.cumsum(x, dim=1) shifted right by one with a leading 0 (the exclusive scan, out.shape == x.shape), row by row in double.
#include <leap/oracle.hpp>

#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), cols = problem.size("cols");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) {
      out[r * cols + c] = s;
      s += x[r * cols + c];
    }
  }
}

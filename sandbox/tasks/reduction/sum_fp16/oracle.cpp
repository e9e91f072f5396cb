// Oracle: torch.sum(x, dim=1) of a rows x cols half matrix, in double (the output's rounding to
// half is left to the tolerance).
#include <leap/oracle.hpp>

#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), cols = problem.size("cols");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    double s = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) s += x[r * cols + c];
    out[r] = s;
  }
}

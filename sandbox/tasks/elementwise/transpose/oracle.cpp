// Oracle: out[c][r] = in[r][c] for the row-major rows x cols matrix in.
#include <leap/oracle.hpp>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), cols = problem.size("cols");
  const auto in = problem.in("in");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) out[c * rows + r] = in[r * cols + c];
}

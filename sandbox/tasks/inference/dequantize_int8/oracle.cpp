// Oracle: out[r][c] = q[r][c] * scale[r] in double.
#include <leap/oracle.hpp>

LEAP_ORACLE(problem) {
  const auto rows = problem.size("rows");
  const auto cols = problem.size("cols");
  const auto q = problem.in("q");
  const auto scale = problem.in("scale");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = q[r * cols + c] * scale[r];
}

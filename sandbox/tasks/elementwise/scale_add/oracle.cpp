// Oracle: out = alpha x + y, in double.
#include <leap/oracle.hpp>

LEAP_ORACLE(problem) {
  const std::int64_t n = problem.size("n");
  const double alpha = problem.scalar("alpha");
  const auto x = problem.in("x");
  const auto y = problem.in("y");
  auto out = problem.out("out");
  for (std::int64_t i = 0; i < n; ++i) out[i] = alpha * x[i] + y[i];
}

// Oracle: GELU with the tanh approximation, 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))), in double.
#include <leap/oracle.hpp>

#include <cmath>

LEAP_ORACLE(problem) {
  const std::int64_t n = problem.size("n");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  const double k = std::sqrt(2.0 / 3.14159265358979323846);
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    out[i] = 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
  }
}

// Oracle: torch.selu(x), elementwise in double.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t n = problem.size("n");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    out[i] = v > 0.0 ? 1.0507009873554805 * v : 1.0507009873554805 * 1.6732632423543772 * std::expm1(v);
  }
}

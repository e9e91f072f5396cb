// Oracle: torch.nn.functional.mish(x), elementwise in double.
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
    out[i] = v * std::tanh(std::log1p(std::exp(v)));
  }
}

// Oracle: torch.nn.functional.softplus(x, beta=1, threshold=20) on bfloat16, elementwise in double from the bfloat16 inputs.
#include <leap/oracle.hpp>

#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t n = problem.size("n");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    out[i] = v > 20.0 ? v : std::log1p(std::exp(v));
  }
}

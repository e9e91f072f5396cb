// Oracle: torch.nn.functional.silu(x) = x * torch.sigmoid(x) on float16, elementwise in double from the half inputs.
#include <leap/oracle.hpp>

#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t n = problem.size("n");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    out[i] = v / (1.0 + std::exp(-v));
  }
}

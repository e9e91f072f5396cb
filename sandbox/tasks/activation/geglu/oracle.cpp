// Oracle: gelu(gate) * up in double, gelu(g) = g * Phi(g) with Phi the standard normal CDF (erfc form).
#include <leap/oracle.hpp>

#include <cmath>

LEAP_ORACLE(problem) {
  const auto tokens = problem.size("tokens");
  const auto hidden = problem.size("hidden");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t j = 0; j < hidden; ++j) {
      const double gate = x[t * 2 * hidden + j];
      const double up = x[t * 2 * hidden + hidden + j];
      const double normal_cdf = 0.5 * std::erfc(-gate / std::sqrt(2.0));
      out[t * hidden + j] = gate * normal_cdf * up;
    }
  }
}

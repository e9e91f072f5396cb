// Oracle: silu(gate) * up in double, silu(g) = g * sigmoid(g).
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
      const double sigmoid = 1.0 / (1.0 + std::exp(-gate));
      out[t * hidden + j] = gate * sigmoid * up;
    }
  }
}

// Oracle: y = gelu(x W^T + b) in double, gelu(v) = v * Phi(v) with Phi the standard normal CDF.
#include <leap/oracle.hpp>

#include <cmath>

LEAP_ORACLE(problem) {
  const auto M = problem.size("M");
  const auto N = problem.size("N");
  const auto K = problem.size("K");
  const auto x = problem.in("x");
  const auto W = problem.in("W");
  const auto b = problem.in("b");
  auto y = problem.out("y");
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      double pre = b[n];
      for (std::int64_t k = 0; k < K; ++k) pre += x[m * K + k] * W[n * K + k];
      y[m * N + n] = pre * 0.5 * std::erfc(-pre / std::sqrt(2.0));
    }
}

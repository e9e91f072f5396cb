// Oracle: y = A x in double, y[i] = sum_k A[i][k] * x[k].
#include <leap/oracle.hpp>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t M = problem.size("M"), K = problem.size("K");
  const auto A = problem.in("A");
  const auto x = problem.in("x");
  auto y = problem.out("y");
  for (std::int64_t i = 0; i < M; ++i) {
    double sum = 0.0;
    for (std::int64_t k = 0; k < K; ++k) sum += A[i * K + k] * x[k];
    y[i] = sum;
  }
}

// Oracle: C = A B for row-major A (M x K) and B (K x N), summed in double.
#include <leap/oracle.hpp>

LEAP_ORACLE(problem) {
  const std::int64_t M = problem.size("M"), N = problem.size("N"), K = problem.size("K");
  const auto A = problem.in("A");
  const auto B = problem.in("B");
  auto C = problem.out("C");
  for (std::int64_t i = 0; i < M; ++i) {
    for (std::int64_t k = 0; k < K; ++k) {
      const double a = A[i * K + k];
      for (std::int64_t j = 0; j < N; ++j) C[i * N + j] += a * B[k * N + j];
    }
  }
}

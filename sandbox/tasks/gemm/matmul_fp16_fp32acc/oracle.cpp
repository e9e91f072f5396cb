// Oracle: C[m][n] = sum_k A[m][k] * B[k][n] in double.
#include <leap/oracle.hpp>

LEAP_ORACLE(problem) {
  const auto M = problem.size("M");
  const auto N = problem.size("N");
  const auto K = problem.size("K");
  const auto A = problem.in("A");
  const auto B = problem.in("B");
  auto C = problem.out("C");
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t k = 0; k < K; ++k) {
      const double a = A[m * K + k];
      for (std::int64_t n = 0; n < N; ++n) C[m * N + n] += a * B[k * N + n];  // C arrives zero-filled
    }
}

// Oracle: C = A B in double from the definition; the verifier compares after the reference's one rounding.
#include <leap/oracle.hpp>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t batch = problem.size("batch"), M = problem.size("M"), N = problem.size("N"), K = problem.size("K");
  const auto A = problem.in("A");
  const auto B = problem.in("B");
  auto C = problem.out("C");
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j) {
        double sum = 0.0;
        for (std::int64_t k = 0; k < K; ++k) sum += A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
        C[(b * M + i) * N + j] = sum;
      }
}

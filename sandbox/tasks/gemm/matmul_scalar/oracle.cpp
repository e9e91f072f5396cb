// Oracle: C = A * s in double.
#include <leap/oracle.hpp>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t M = problem.size("M"), N = problem.size("N");
  const double s = problem.scalar("s");
  const auto A = problem.in("A");
  auto C = problem.out("C");
  for (std::int64_t r = 0; r < M; ++r)
    for (std::int64_t c = 0; c < N; ++c) C[r * N + c] = s * A[r * N + c];
}

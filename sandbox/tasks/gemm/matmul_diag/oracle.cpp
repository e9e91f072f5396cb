// Oracle: C = diag(d) @ B in double, forming the product as a sum over k with diag(d)[i][k] = d[i] if k == i.
#include <leap/oracle.hpp>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t N = problem.size("N"), M = problem.size("M");
  const auto d = problem.in("d");
  const auto B = problem.in("B");
  auto C = problem.out("C");
  for (std::int64_t i = 0; i < N; ++i)
    for (std::int64_t j = 0; j < M; ++j) {
      double sum = 0.0;
      for (std::int64_t k = i; k <= i; ++k) sum += d[k] * B[k * M + j];  // the only nonzero term of row i of diag(d)
      C[i * M + j] = sum;
    }
}

// Oracle: C = A B in double from the definition; the verifier compares after the reference's one rounding.
#include <leap/oracle.hpp>
#include <algorithm>
#include <cstdint>
#include <vector>

LEAP_ORACLE(problem) {
  const std::int64_t batch = 1, M = problem.size("M"), N = problem.size("N"), K = problem.size("K");
  const auto A = problem.in("A");
  const auto B = problem.in("B");
  auto C = problem.out("C");
  // Each row of C summed over k in order, k outermost so B is read along its rows: the same sums, in
  // the same order, as the dot products of the definition, without walking B down its columns.
  std::vector<double> row(static_cast<std::size_t>(N));
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < M; ++i) {
      std::fill(row.begin(), row.end(), 0.0);
      for (std::int64_t k = 0; k < K; ++k) {
        const double a = A[(b * M + i) * K + k];
        for (std::int64_t j = 0; j < N; ++j) row[static_cast<std::size_t>(j)] += a * B[(b * K + k) * N + j];
      }
      for (std::int64_t j = 0; j < N; ++j) C[(b * M + i) * N + j] = row[static_cast<std::size_t>(j)];
    }
}

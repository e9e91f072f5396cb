// Oracle: C = op(A) op(B) in double, from the definition C[i][j] = sum_k op(A)[i][k] op(B)[k][j].
#include <leap/oracle.hpp>
#include <cstdint>
#include <vector>

LEAP_ORACLE(problem) {
  const std::int64_t batch = 1, M = problem.size("M"), N = problem.size("N"), K = problem.size("K");
  const auto A = problem.in("A");
  const auto B = problem.in("B");
  auto C = problem.out("C");
  // op(A)[i][k] and op(B)[k][j] of batch b, per the layout in the task's description.
  auto a = [&](std::int64_t b, std::int64_t i, std::int64_t k) { return A[b * M * K + k * M + i]; };
  auto bb = [&](std::int64_t b, std::int64_t k, std::int64_t j) { return B[b * K * N + j * K + k]; };
  std::vector<double> row(static_cast<std::size_t>(N));
  // op(B) of the batch laid out k-major first, so the row loop reads it along its rows rather than
  // down B's columns; the sums are the same, in the same order.
  std::vector<double> opb(static_cast<std::size_t>(K * N));
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t j = 0; j < N; ++j) opb[static_cast<std::size_t>(k * N + j)] = bb(b, k, j);
    for (std::int64_t i = 0; i < M; ++i) {
      for (auto& v : row) v = 0.0;
      for (std::int64_t k = 0; k < K; ++k) {
        const double aik = a(b, i, k);
        for (std::int64_t j = 0; j < N; ++j) row[static_cast<std::size_t>(j)] += aik * opb[static_cast<std::size_t>(k * N + j)];
      }
      for (std::int64_t j = 0; j < N; ++j) C[(b * M + i) * N + j] = row[static_cast<std::size_t>(j)];
    }
  }
}

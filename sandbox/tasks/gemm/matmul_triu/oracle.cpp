// Oracle: C = triu(triu(A) @ triu(B)) in double: mask the inputs to their triangles, multiply in full,
// then mask the product.
#include <leap/oracle.hpp>
#include <algorithm>
#include <cstdint>
#include <vector>

LEAP_ORACLE(problem) {
  const std::int64_t N = problem.size("N");
  const auto A = problem.in("A");
  const auto B = problem.in("B");
  auto C = problem.out("C");
  auto keep = [](std::int64_t r, std::int64_t c) { return r <= c; };
  std::vector<double> a(static_cast<std::size_t>(N * N)), b(a.size());
  for (std::int64_t r = 0; r < N; ++r)
    for (std::int64_t c = 0; c < N; ++c) {
      a[static_cast<std::size_t>(r * N + c)] = keep(r, c) ? A[r * N + c] : 0.0;
      b[static_cast<std::size_t>(r * N + c)] = keep(r, c) ? B[r * N + c] : 0.0;
    }
  // Row r of the product summed over k in order, k outermost so b is read along its rows.
  std::vector<double> row(static_cast<std::size_t>(N));
  for (std::int64_t r = 0; r < N; ++r) {
    std::fill(row.begin(), row.end(), 0.0);
    for (std::int64_t k = 0; k < N; ++k) {
      const double ark = a[static_cast<std::size_t>(r * N + k)];
      for (std::int64_t c = 0; c < N; ++c) row[static_cast<std::size_t>(c)] += ark * b[static_cast<std::size_t>(k * N + c)];
    }
    for (std::int64_t c = 0; c < N; ++c) C[r * N + c] = keep(r, c) ? row[static_cast<std::size_t>(c)] : 0.0;
  }
}

// Oracle: C = einsum("bijl,lk->bijk", A, B) in double, indexing all four dimensions.
#include <leap/oracle.hpp>
#include <algorithm>
#include <cstdint>
#include <vector>

LEAP_ORACLE(problem) {
  const std::int64_t nb = problem.size("b"), ni = problem.size("i"), nj = problem.size("j"), nl = problem.size("l"), nk = problem.size("k");
  const auto A = problem.in("A");
  const auto B = problem.in("B");
  auto C = problem.out("C");
  // Each output row (b, i, j, :) summed over l in order, l outermost so B is read along its rows.
  std::vector<double> row(static_cast<std::size_t>(nk));
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t i = 0; i < ni; ++i)
      for (std::int64_t j = 0; j < nj; ++j) {
        std::fill(row.begin(), row.end(), 0.0);
        for (std::int64_t l = 0; l < nl; ++l) {
          const double a = A[((b * ni + i) * nj + j) * nl + l];
          for (std::int64_t k = 0; k < nk; ++k) row[static_cast<std::size_t>(k)] += a * B[l * nk + k];
        }
        for (std::int64_t k = 0; k < nk; ++k) C[((b * ni + i) * nj + j) * nk + k] = row[static_cast<std::size_t>(k)];
      }
}

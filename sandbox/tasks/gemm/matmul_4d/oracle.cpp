// Oracle: C = einsum("bijl,lk->bijk", A, B) in double, indexing all four dimensions.
#include <leap/oracle.hpp>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t nb = problem.size("b"), ni = problem.size("i"), nj = problem.size("j"), nl = problem.size("l"), nk = problem.size("k");
  const auto A = problem.in("A");
  const auto B = problem.in("B");
  auto C = problem.out("C");
  for (std::int64_t b = 0; b < nb; ++b)
    for (std::int64_t i = 0; i < ni; ++i)
      for (std::int64_t j = 0; j < nj; ++j)
        for (std::int64_t k = 0; k < nk; ++k) {
          double sum = 0.0;
          for (std::int64_t l = 0; l < nl; ++l) sum += A[((b * ni + i) * nj + j) * nl + l] * B[l * nk + k];
          C[((b * ni + i) * nj + j) * nk + k] = sum;
        }
}

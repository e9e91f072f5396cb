// Oracle: torch.nn.functional.conv1d(x, w, bias, padding=2) in double, over a zero-padded copy of each row.
#include <leap/oracle.hpp>
#include <cstdint>
#include <vector>

LEAP_ORACLE(problem) {
  const std::int64_t N = problem.size("N"), C = problem.size("C"), L = problem.size("L"), F = problem.size("F");
  const std::int64_t K = 5, P = 2;
  const auto x = problem.in("x");
  const auto w = problem.in("w");
  const auto bias = problem.in("bias");
  auto y = problem.out("y");
  std::vector<double> row(static_cast<std::size_t>(L + 2 * P));
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t f = 0; f < F; ++f) {
      std::vector<double> out(static_cast<std::size_t>(L), bias[f]);
      for (std::int64_t c = 0; c < C; ++c) {
        for (auto& v : row) v = 0.0;
        for (std::int64_t i = 0; i < L; ++i) row[static_cast<std::size_t>(i + P)] = x[(n * C + c) * L + i];
        for (std::int64_t o = 0; o < L; ++o)
          for (std::int64_t k = 0; k < K; ++k) out[static_cast<std::size_t>(o)] += row[static_cast<std::size_t>(o + k)] * w[(f * C + c) * K + k];
      }
      for (std::int64_t o = 0; o < L; ++o) y[(n * F + f) * L + o] = out[static_cast<std::size_t>(o)];
    }
}

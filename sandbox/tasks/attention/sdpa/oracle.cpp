// Oracle: O = softmax(Q K^T / sqrt(D)) V in double, per (batch, head): the full score matrix,
// a numerically stable softmax per row, then the product with V.
#include <leap/oracle.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

LEAP_ORACLE(problem) {
  const std::int64_t B = problem.size("B"), H = problem.size("H"), S = problem.size("S"), D = problem.size("D");
  const bool causal = false;
  const auto Q = problem.in("Q");
  const auto K = problem.in("K");
  const auto V = problem.in("V");
  auto O = problem.out("O");
  std::vector<double> p(static_cast<std::size_t>(S * S));
  for (std::int64_t bh = 0; bh < B * H; ++bh) {
    const std::int64_t base = bh * S * D;
    for (std::int64_t r = 0; r < S; ++r) {
      double mx = -std::numeric_limits<double>::infinity();
      for (std::int64_t c = 0; c < S; ++c) {
        double s = -std::numeric_limits<double>::infinity();
        if (!causal || c <= r) {
          s = 0.0;
          for (std::int64_t d = 0; d < D; ++d) s += Q[base + r * D + d] * K[base + c * D + d];
          s /= std::sqrt(static_cast<double>(D));
        }
        p[static_cast<std::size_t>(r * S + c)] = s;
        if (s > mx) mx = s;
      }
      double z = 0.0;
      for (std::int64_t c = 0; c < S; ++c) z += (p[static_cast<std::size_t>(r * S + c)] = std::exp(p[static_cast<std::size_t>(r * S + c)] - mx));
      for (std::int64_t c = 0; c < S; ++c) p[static_cast<std::size_t>(r * S + c)] /= z;
    }
    for (std::int64_t r = 0; r < S; ++r)
      for (std::int64_t d = 0; d < D; ++d) {
        double acc = 0.0;
        for (std::int64_t c = 0; c < S; ++c) acc += p[static_cast<std::size_t>(r * S + c)] * V[base + c * D + d];
        O[base + r * D + d] = acc;
      }
  }
}

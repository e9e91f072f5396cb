// Oracle: the two stages as PyTorch runs them, in double: t = conv2d(x, dw, db, padding=1, groups=C)
// materialised in full, then y = conv2d(t, pw, pb) (1 x 1).
#include <leap/oracle.hpp>
#include <cstdint>
#include <vector>

LEAP_ORACLE(problem) {
  const std::int64_t N = problem.size("N"), C = problem.size("C"), H = problem.size("H"), W = problem.size("W"), F = problem.size("F");
  const auto x = problem.in("x");
  const auto dw = problem.in("dw");
  const auto db = problem.in("db");
  const auto pw = problem.in("pw");
  const auto pb = problem.in("pb");
  auto y = problem.out("y");
  std::vector<double> t(static_cast<std::size_t>(N * C * H * W));
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t v = 0; v < W; ++v) {
          double sum = db[c];
          for (std::int64_t a = 0; a < 3; ++a)
            for (std::int64_t b = 0; b < 3; ++b) {
              const std::int64_t ih = h + a - 1, iv = v + b - 1;
              if (ih >= 0 && ih < H && iv >= 0 && iv < W) sum += x[((n * C + c) * H + ih) * W + iv] * dw[c * 9 + a * 3 + b];
            }
          t[static_cast<std::size_t>(((n * C + c) * H + h) * W + v)] = sum;
        }
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t f = 0; f < F; ++f)
      for (std::int64_t s = 0; s < H * W; ++s) {
        double sum = pb[f];
        for (std::int64_t c = 0; c < C; ++c) sum += pw[f * C + c] * t[static_cast<std::size_t>((n * C + c) * H * W + s)];
        y[(n * F + f) * H * W + s] = sum;
      }
}

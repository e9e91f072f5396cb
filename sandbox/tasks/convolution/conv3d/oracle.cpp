// Oracle: torch.nn.functional.conv3d(x, w, bias, padding=1) in double: for every output, the sum over
// channels and the 27 taps of the zero-padded input.
#include <leap/oracle.hpp>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t N = problem.size("N"), C = problem.size("C"), D = problem.size("D"), H = problem.size("H"), W = problem.size("W"), F = problem.size("F");
  const auto x = problem.in("x");
  const auto w = problem.in("w");
  const auto bias = problem.in("bias");
  auto y = problem.out("y");
  auto at = [&](std::int64_t n, std::int64_t c, std::int64_t d, std::int64_t h, std::int64_t v) {
    if (d < 0 || d >= D || h < 0 || h >= H || v < 0 || v >= W) return 0.0;
    return x[(((n * C + c) * D + d) * H + h) * W + v];
  };
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t f = 0; f < F; ++f)
      for (std::int64_t d = 0; d < D; ++d)
        for (std::int64_t h = 0; h < H; ++h)
          for (std::int64_t v = 0; v < W; ++v) {
            double sum = bias[f];
            for (std::int64_t c = 0; c < C; ++c)
              for (std::int64_t a = -1; a <= 1; ++a)
                for (std::int64_t b = -1; b <= 1; ++b)
                  for (std::int64_t e = -1; e <= 1; ++e)
                    sum += at(n, c, d + a, h + b, v + e) * w[(((f * C + c) * 3 + a + 1) * 3 + b + 1) * 3 + e + 1];
            y[(((n * F + f) * D + d) * H + h) * W + v] = sum;
          }
}

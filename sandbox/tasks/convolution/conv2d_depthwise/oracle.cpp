// Oracle: torch.nn.functional.conv2d(x, w, bias, padding=1, groups=C) in double: each output channel
// is its own input channel's 3 x 3 window sum.
#include <leap/oracle.hpp>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t N = problem.size("N"), C = problem.size("C"), H = problem.size("H"), W = problem.size("W");
  const auto x = problem.in("x");
  const auto w = problem.in("w");
  const auto bias = problem.in("bias");
  auto y = problem.out("y");
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t c = 0; c < C; ++c)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t v = 0; v < W; ++v) {
          double sum = bias[c];
          for (std::int64_t dh = -1; dh <= 1; ++dh)
            for (std::int64_t dv = -1; dv <= 1; ++dv) {
              const std::int64_t ih = h + dh, iv = v + dv;
              if (ih < 0 || ih >= H || iv < 0 || iv >= W) continue;
              sum += x[((n * C + c) * H + ih) * W + iv] * w[c * 9 + (dh + 1) * 3 + dv + 1];
            }
          y[((n * C + c) * H + h) * W + v] = sum;
        }
}

// Oracle: torch.nn.functional.conv_transpose2d(x, w, bias, stride=2, padding=1) in double, as the
// scatter it is defined as: every input pixel adds x * w[ci][co] into the 4 x 4 output window at
// (2*ih - 1, 2*iw - 1); contributions that land outside the output are dropped.
#include <leap/oracle.hpp>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t N = problem.size("N"), Cin = problem.size("Cin"), H = problem.size("H"), W = problem.size("W"), Cout = problem.size("Cout");
  const std::int64_t OH = (H - 1) * 2 - 2 * 1 + 4, OW = (W - 1) * 2 - 2 * 1 + 4;
  const auto x = problem.in("x");
  const auto w = problem.in("w");
  const auto bias = problem.in("bias");
  auto y = problem.out("y");
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t co = 0; co < Cout; ++co)
      for (std::int64_t s = 0; s < OH * OW; ++s) y[(n * Cout + co) * OH * OW + s] = bias[co];
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t ci = 0; ci < Cin; ++ci)
      for (std::int64_t ih = 0; ih < H; ++ih)
        for (std::int64_t iw = 0; iw < W; ++iw) {
          const double v = x[((n * Cin + ci) * H + ih) * W + iw];
          for (std::int64_t co = 0; co < Cout; ++co)
            for (std::int64_t kh = 0; kh < 4; ++kh)
              for (std::int64_t kw = 0; kw < 4; ++kw) {
                const std::int64_t oh = ih * 2 - 1 + kh, ow = iw * 2 - 1 + kw;
                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                y[((n * Cout + co) * OH + oh) * OW + ow] += v * w[((ci * Cout + co) * 4 + kh) * 4 + kw];
              }
        }
}

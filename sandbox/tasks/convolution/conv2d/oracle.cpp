// Oracle: torch.nn.functional.conv2d(x, w, bias, stride=(1, 1), padding=(1, 1), dilation=(1, 1)) in double:
// the input is copied into a zero-padded image, then every output is a full window sum over it.
#include <leap/oracle.hpp>
#include <cstdint>
#include <vector>

LEAP_ORACLE(problem) {
  const std::int64_t N = problem.size("N"), C = problem.size("C"), H = problem.size("H"), W = problem.size("W"), F = problem.size("F");
  const std::int64_t KH = 3, KW = 3, SH = 1, SW = 1, PH = 1, PW = 1, DH = 1, DW = 1;
  const std::int64_t OH = (H + 2 * PH - DH * (KH - 1) - 1) / SH + 1, OW = (W + 2 * PW - DW * (KW - 1) - 1) / SW + 1;
  const auto x = problem.in("x");
  const auto w = problem.in("w");
  const auto bias = problem.in("bias");
  auto y = problem.out("y");
  const std::int64_t HP = H + 2 * PH, WP = W + 2 * PW;
  std::vector<double> padded(static_cast<std::size_t>(N * C * HP * WP), 0.0);
  for (std::int64_t nc = 0; nc < N * C; ++nc)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t v = 0; v < W; ++v) padded[static_cast<std::size_t>((nc * HP + h + PH) * WP + v + PW)] = x[(nc * H + h) * W + v];
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t f = 0; f < F; ++f)
      for (std::int64_t oh = 0; oh < OH; ++oh)
        for (std::int64_t ow = 0; ow < OW; ++ow) {
          double sum = bias[f];
          for (std::int64_t c = 0; c < C; ++c)
            for (std::int64_t kh = 0; kh < KH; ++kh)
              for (std::int64_t kw = 0; kw < KW; ++kw)
                sum += padded[static_cast<std::size_t>(((n * C + c) * HP + oh * SH + kh * DH) * WP + ow * SW + kw * DW)] *
                       w[((f * C + c) * KH + kh) * KW + kw];
          y[((n * F + f) * OH + oh) * OW + ow] = sum;
        }
}

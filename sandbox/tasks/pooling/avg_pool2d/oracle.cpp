// Oracle: torch.nn.functional.avg_pool2d(x, kernel_size=3) (stride 3, padding 0) on x of shape [batch, channels, height, width], in double: window
// positions o * stride - padding + k * dilation; taps in the padding count as 0 and the divisor is always the full window.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>

LEAP_ORACLE(problem) {
  const std::int64_t k = 3, stride = 3, pad = 0, dil = 1;
  const std::int64_t planes = problem.size("batch") * problem.size("channels");
  // Up to three spatial extents; missing ones are 1 with a one-tap window.
  std::int64_t in[3] = {1, 1, 1}, outn[3] = {1, 1, 1}, taps[3] = {1, 1, 1};
  const char* names[2] = {"height", "width"};
  for (int a = 0; a < 2; ++a) {
    in[3 - 2 + a] = problem.size(names[a]);
    outn[3 - 2 + a] = (in[3 - 2 + a] + 2 * pad - dil * (k - 1) - 1) / stride + 1;
    taps[3 - 2 + a] = k;
  }
  const auto x = problem.in("x");
  auto out = problem.out("out");
  std::int64_t o = 0;
  for (std::int64_t pl = 0; pl < planes; ++pl)
    for (std::int64_t a = 0; a < outn[0]; ++a)
      for (std::int64_t b = 0; b < outn[1]; ++b)
        for (std::int64_t c = 0; c < outn[2]; ++c) {
          const std::int64_t at[3] = {a, b, c};
          double acc = 0.0;
          for (std::int64_t ta = 0; ta < taps[0]; ++ta)
            for (std::int64_t tb = 0; tb < taps[1]; ++tb)
              for (std::int64_t tc = 0; tc < taps[2]; ++tc) {
                const std::int64_t t[3] = {ta, tb, tc};
                std::int64_t pos[3];
                bool inside = true;
                for (int q = 0; q < 3; ++q) {
                  const bool pooled = q >= 3 - 2;
                  pos[q] = pooled ? at[q] * stride - pad + t[q] * dil : at[q];
                  inside = inside && pos[q] >= 0 && pos[q] < in[q];
                }
                if (!inside) continue;
                const double v = x[((pl * in[0] + pos[0]) * in[1] + pos[1]) * in[2] + pos[2]];
                acc += v;
              }
          out[o++] = acc / 9.0;
        }
}

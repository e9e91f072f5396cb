// Oracle: torch.nn.functional.conv2d(x, w, bias) with a 1 x 1 kernel in double: at every pixel, the
// F x C weight matrix times the pixel's channel vector, plus the bias.
#include <leap/oracle.hpp>
#include <cstdint>
#include <vector>

LEAP_ORACLE(problem) {
  const std::int64_t N = problem.size("N"), C = problem.size("C"), H = problem.size("H"), W = problem.size("W"), F = problem.size("F");
  const auto x = problem.in("x");
  const auto w = problem.in("w");
  const auto bias = problem.in("bias");
  auto y = problem.out("y");
  std::vector<double> pixel(static_cast<std::size_t>(C));
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t s = 0; s < H * W; ++s) {
      for (std::int64_t c = 0; c < C; ++c) pixel[static_cast<std::size_t>(c)] = x[(n * C + c) * H * W + s];
      for (std::int64_t f = 0; f < F; ++f) {
        double sum = bias[f];
        for (std::int64_t c = 0; c < C; ++c) sum += w[f * C + c] * pixel[static_cast<std::size_t>(c)];
        y[(n * F + f) * H * W + s] = sum;
      }
    }
}

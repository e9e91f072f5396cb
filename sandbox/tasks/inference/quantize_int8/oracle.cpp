// Oracle: scale = absmax / 127 per row, q = round(x / scale) clamped to [-127, 127], in double.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cmath>

LEAP_ORACLE(problem) {
  const auto rows = problem.size("rows");
  const auto cols = problem.size("cols");
  const auto x = problem.in("x");
  auto q = problem.out("q");
  auto scale = problem.out("scale");
  for (std::int64_t r = 0; r < rows; ++r) {
    double absmax = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) absmax = std::max(absmax, std::abs(x[r * cols + c]));
    scale[r] = absmax / 127.0;
    for (std::int64_t c = 0; c < cols; ++c)
      q[r * cols + c] = absmax == 0.0 ? 0.0 : std::clamp(std::nearbyint(x[r * cols + c] / scale[r]), -127.0, 127.0);
  }
}

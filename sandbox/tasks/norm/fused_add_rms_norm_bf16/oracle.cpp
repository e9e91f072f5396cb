// Oracle: residual = bf16(residual + x) (the rounding is part of the task's formula), then RMSNorm of the
// rounded residual over the last dimension, in double.
#include <leap/oracle.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>

namespace {

// Round to bfloat16 (nearest, ties to even) through float, as a float add followed by a bfloat16 store does.
double round_to_bfloat16(double v) {
  float f = static_cast<float>(v);
  std::uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

}  // namespace

LEAP_ORACLE(problem) {
  const auto rows = problem.size("rows");
  const auto cols = problem.size("cols");
  const double eps = problem.scalar("eps");
  const auto x = problem.in("x");
  const auto weight = problem.in("weight");
  auto residual = problem.out("residual");  // arrives holding the drawn residual
  auto out = problem.out("out");
  for (std::int64_t i = 0; i < rows * cols; ++i) residual[i] = round_to_bfloat16(residual[i] + x[i]);
  for (std::int64_t r = 0; r < rows; ++r) {
    double mean_sq = 0.0;
    for (std::int64_t c = 0; c < cols; ++c) mean_sq += residual[r * cols + c] * residual[r * cols + c];
    mean_sq /= static_cast<double>(cols);
    const double scale = 1.0 / std::sqrt(mean_sq + eps);
    for (std::int64_t c = 0; c < cols; ++c) out[r * cols + c] = residual[r * cols + c] * scale * weight[c];
  }
}

// Oracle: torch.nn.functional.instance_norm(x, eps=eps) (no affine, no running statistics) for x of
// shape [batch, channels, height, width]: each plane normalised by its own mean and biased variance.
#include <leap/oracle.hpp>

#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t planes = problem.size("batch") * problem.size("channels");
  const std::int64_t hw = problem.size("height") * problem.size("width");
  const double eps = problem.scalar("eps");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t pl = 0; pl < planes; ++pl) {
    double sum = 0.0;
    for (std::int64_t j = 0; j < hw; ++j) sum += x[pl * hw + j];
    const double mean = sum / static_cast<double>(hw);
    double sq = 0.0;
    for (std::int64_t j = 0; j < hw; ++j) sq += (x[pl * hw + j] - mean) * (x[pl * hw + j] - mean);
    const double inv = 1.0 / std::sqrt(sq / static_cast<double>(hw) + eps);
    for (std::int64_t j = 0; j < hw; ++j) out[pl * hw + j] = (x[pl * hw + j] - mean) * inv;
  }
}

// Oracle: torch.nn.functional.triplet_margin_loss(anchor, positive, negative, margin=margin, p=2,
// eps=1e-6, reduction='mean') in double: d(x, y) = ||x - y + eps||_2 (pairwise_distance adds eps to
// the difference), the mean over rows of max(d(a, p) - d(a, n) + margin, 0), added to the running total.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), dim = problem.size("dim");
  const double margin = problem.scalar("margin"), eps = 1e-6;
  const auto anchor = problem.in("anchor");
  const auto positive = problem.in("positive");
  const auto negative = problem.in("negative");
  auto out = problem.out("out");  // inout: arrives holding the running total
  auto distance = [&](std::span<const double> other, std::int64_t r) {
    double sum = 0.0;
    for (std::int64_t j = r * dim; j < (r + 1) * dim; ++j) {
      const double d = anchor[j] - other[j] + eps;
      sum += d * d;
    }
    return std::sqrt(sum);
  };
  double total = 0.0;
  for (std::int64_t r = 0; r < rows; ++r)
    total += std::max(distance(positive, r) - distance(negative, r) + margin, 0.0);
  out[0] += total / static_cast<double>(rows);
}

// Oracle: torch.mean(1 - torch.nn.functional.cosine_similarity(predictions, targets, dim=1)) in
// double, cos = x . y / (max(||x||, 1e-8) * max(||y||, 1e-8)), added to the running total.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), dim = problem.size("dim");
  const auto predictions = problem.in("predictions");
  const auto targets = problem.in("targets");
  auto out = problem.out("out");  // inout: arrives holding the running total
  double total = 0.0;
  for (std::int64_t r = 0; r < rows; ++r) {
    double dot = 0.0, pp = 0.0, tt = 0.0;
    for (std::int64_t j = r * dim; j < (r + 1) * dim; ++j) {
      dot += predictions[j] * targets[j];
      pp += predictions[j] * predictions[j];
      tt += targets[j] * targets[j];
    }
    total += 1.0 - dot / (std::max(std::sqrt(pp), 1e-8) * std::max(std::sqrt(tt), 1e-8));
  }
  out[0] += total / static_cast<double>(rows);
}

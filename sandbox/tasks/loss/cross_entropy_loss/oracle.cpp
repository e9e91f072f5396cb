// Oracle: torch.nn.functional.cross_entropy(logits, targets, reduction='mean') in double: the mean over
// rows of logsumexp(row) - row[target], added to the running total.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), classes = problem.size("classes");
  const auto logits = problem.in("logits");
  const auto targets = problem.in("targets");
  auto out = problem.out("out");  // inout: arrives holding the running total
  double total = 0.0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = logits.data() + r * classes;
    const double peak = *std::max_element(row, row + classes);
    double sum = 0.0;
    for (std::int64_t c = 0; c < classes; ++c) sum += std::exp(row[c] - peak);
    const auto target = static_cast<std::int64_t>(targets[r]);
    total += peak + std::log(sum) - row[target];
  }
  out[0] += total / static_cast<double>(rows);
}

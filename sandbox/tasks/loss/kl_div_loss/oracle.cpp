// Oracle: torch.nn.functional.kl_div(log(softmax(pred_logits)), softmax(target_logits),
// reduction='batchmean') in double: the sum over all elements of t * (log t - log p), divided by rows,
// added to the running total.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

// log(softmax(row)) in double.
std::vector<double> log_softmax(const double* row, std::int64_t n) {
  const double peak = *std::max_element(row, row + n);
  double sum = 0.0;
  for (std::int64_t j = 0; j < n; ++j) sum += std::exp(row[j] - peak);
  const double log_sum = peak + std::log(sum);
  std::vector<double> out(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) out[static_cast<std::size_t>(j)] = row[j] - log_sum;
  return out;
}

}  // namespace

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), cols = problem.size("cols");
  const auto pred = problem.in("pred_logits");
  const auto target = problem.in("target_logits");
  auto out = problem.out("out");  // inout: arrives holding the running total
  double total = 0.0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::vector<double> log_p = log_softmax(pred.data() + r * cols, cols);
    const std::vector<double> log_t = log_softmax(target.data() + r * cols, cols);
    for (std::size_t j = 0; j < log_p.size(); ++j) total += std::exp(log_t[j]) * (log_t[j] - log_p[j]);
  }
  out[0] += total / static_cast<double>(rows);
}

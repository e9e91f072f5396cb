// Oracle: log_softmax(x) = x - logsumexp(x) per row, in double.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cmath>

LEAP_ORACLE(problem) {
  const auto rows = problem.size("rows");
  const auto vocab = problem.size("vocab");
  const auto logits = problem.in("logits");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = logits.data() + r * vocab;
    const double peak = *std::max_element(row, row + vocab);
    double total = 0.0;
    for (std::int64_t c = 0; c < vocab; ++c) total += std::exp(row[c] - peak);
    const double logsumexp = peak + std::log(total);
    for (std::int64_t c = 0; c < vocab; ++c) out[r * vocab + c] = row[c] - logsumexp;
  }
}

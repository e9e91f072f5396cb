// Oracle: torch.nn.functional.mse_loss(predictions, targets, reduction='mean'), summed in double, added to the running total.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t n = problem.size("rows") * problem.size("cols");
  const auto predictions = problem.in("predictions");
  const auto targets = problem.in("targets");
  auto out = problem.out("out");  // inout: arrives holding the running total
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double p = predictions[i], t = targets[i];
    {
      const double d = p - t;
      sum += d * d;
    }
  }
  out[0] += sum * (1.0 / n);
}

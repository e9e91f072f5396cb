// Oracle: torch.nn.functional.smooth_l1_loss(predictions, targets, beta=delta), delta = 0.5 (KernelBench's HuberLoss), summed in double, added to the running total.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t n = problem.size("rows") * problem.size("cols");
  const double delta = problem.scalar("delta");
  const auto predictions = problem.in("predictions");
  const auto targets = problem.in("targets");
  auto out = problem.out("out");  // inout: arrives holding the running total
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double p = predictions[i], t = targets[i];
    {
      const double d = std::fabs(p - t);
      sum += d < delta ? 0.5 * d * d / delta : d - 0.5 * delta;
    }
  }
  out[0] += sum * (1.0 / n);
}

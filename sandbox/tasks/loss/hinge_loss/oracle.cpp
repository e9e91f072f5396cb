// Oracle: torch.mean(torch.clamp(1 - predictions * targets, min=0)) (KernelBench's HingeLoss; targets in {-1, 0, 1}, see description), summed in double, added to the running total.
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
      sum += std::max(1.0 - p * t, 0.0);
    }
  }
  out[0] += sum * (1.0 / n);
}

// Oracle: count every in-range value into the counts it was given.
#include <leap/oracle.hpp>

LEAP_ORACLE(problem) {
  const auto n = problem.size("n");
  const auto bins = problem.size("bins");
  const auto values = problem.in("values");
  auto counts = problem.out("counts");  // arrives holding the drawn earlier counts
  for (std::int64_t i = 0; i < n; ++i) {
    const auto v = static_cast<std::int64_t>(values[i]);
    if (0 <= v && v < bins) counts[v] += 1.0;
  }
}

// Oracle: x / torch.norm(x, p='fro'): every element divided by the square root of the sum of the
// squares of all elements, in double.
#include <leap/oracle.hpp>

#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const auto x = problem.in("x");
  auto out = problem.out("out");
  double sq = 0.0;
  for (const double v : x) sq += v * v;
  const double norm = std::sqrt(sq);
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i] / norm;
}

// Oracle: rotate_every_two in double, the angle p * base^(-2i/head_dim) with base 10000 and head_dim = 2 * half_dim.
#include <leap/oracle.hpp>

#include <cmath>

LEAP_ORACLE(problem) {
  const auto tokens = problem.size("tokens");
  const auto heads = problem.size("heads");
  const auto half = problem.size("half_dim");
  const auto head_dim = 2 * half;
  const auto pos = problem.in("positions");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t base = (t * heads + h) * head_dim;
      for (std::int64_t d = 0; d < head_dim; d += 2) {
        const double inv_freq = 1.0 / std::pow(10000.0, static_cast<double>(d) / static_cast<double>(head_dim));
        const double theta = pos[t] * inv_freq;
        const double even = x[base + d], odd = x[base + d + 1];
        // rotate_every_two(v) = (-odd, even) per pair; v' = v * cos + rotate_every_two(v) * sin
        out[base + d] = even * std::cos(theta) - odd * std::sin(theta);
        out[base + d + 1] = odd * std::cos(theta) + even * std::sin(theta);
      }
    }
  }
}

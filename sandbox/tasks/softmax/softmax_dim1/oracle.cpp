// Oracle: torch.softmax(x, dim=1) for x of shape [batch, dim, inner], in double.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

LEAP_ORACLE(problem) {
  const std::int64_t batch = problem.size("batch"), dim = problem.size("dim"), inner = problem.size("inner");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < inner; ++i) {
      double m = -std::numeric_limits<double>::infinity();
      for (std::int64_t d = 0; d < dim; ++d) m = std::max(m, x[(b * dim + d) * inner + i]);
      double s = 0.0;
      for (std::int64_t d = 0; d < dim; ++d) s += std::exp(x[(b * dim + d) * inner + i] - m);
      for (std::int64_t d = 0; d < dim; ++d) out[(b * dim + d) * inner + i] = std::exp(x[(b * dim + d) * inner + i] - m) / s;
    }
}

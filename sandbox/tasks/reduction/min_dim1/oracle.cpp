// Oracle: torch.min(x, dim=1).values for x of shape [batch, dim, inner], in double.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>

LEAP_ORACLE(problem) {
  const std::int64_t batch = problem.size("batch"), dim = problem.size("dim"), inner = problem.size("inner");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < inner; ++i) {
        double acc = std::numeric_limits<double>::infinity();
        for (std::int64_t d = 0; d < dim; ++d) acc = std::min(acc, x[(b * dim + d) * inner + i]);
        out[b * inner + i] = acc;
    }
}

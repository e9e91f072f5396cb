// Oracle: torch.cumsum(x, dim=1) for x of shape [batch, len, inner], in double.
#include <leap/oracle.hpp>

#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t batch = problem.size("batch"), len = problem.size("len"), inner = problem.size("inner");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < inner; ++i) {
      double s = 0.0;
      for (std::int64_t d = 0; d < len; ++d) {
        s += x[(b * len + d) * inner + i];
        out[(b * len + d) * inner + i] = s;
      }
    }
}

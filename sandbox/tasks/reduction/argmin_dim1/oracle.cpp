// Oracle: torch.argmin(x, dim=1) (int64 indices as int32) for x of shape [batch, dim, inner]: the first index of the extreme value.
#include <leap/oracle.hpp>

#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t batch = problem.size("batch"), dim = problem.size("dim"), inner = problem.size("inner");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < inner; ++i) {
      std::int64_t best = 0;
      for (std::int64_t d = 1; d < dim; ++d)
        if (x[(b * dim + d) * inner + i] < x[(b * dim + best) * inner + i]) best = d;
      out[b * inner + i] = static_cast<double>(best);
    }
}

// Oracle: the inclusive prefix sum along each row (torch.cumsum(x, dim=1)), wrapped to int32 as the kernel's adds wrap.
#include <leap/oracle.hpp>

#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t rows = problem.size("rows"), cols = problem.size("cols");
  const auto x = problem.in("x");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t running = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      running += static_cast<std::int64_t>(x[r * cols + c]);
      out[r * cols + c] = static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(running)));
    }
  }
}

// Oracle: the first column holding the row's maximum.
#include <leap/oracle.hpp>

#include <algorithm>

LEAP_ORACLE(problem) {
  const auto rows = problem.size("rows");
  const auto vocab = problem.size("vocab");
  const auto logits = problem.in("logits");
  auto out = problem.out("out");
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto row = logits.subspan(static_cast<std::size_t>(r * vocab), static_cast<std::size_t>(vocab));
    out[r] = static_cast<double>(std::max_element(row.begin(), row.end()) - row.begin());  // first of equals
  }
}

// Oracle: sort each row's (value, index) pairs by value descending, index ascending, and keep the first k.
#include <leap/oracle.hpp>

#include <algorithm>
#include <numeric>
#include <vector>

LEAP_ORACLE(problem) {
  const auto rows = problem.size("rows");
  const auto vocab = problem.size("vocab");
  const auto k = static_cast<std::int64_t>(problem.scalar("k"));
  const auto logits = problem.in("logits");
  auto values = problem.out("values");
  auto indices = problem.out("indices");
  std::vector<std::int64_t> order(static_cast<std::size_t>(vocab));
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = logits.data() + r * vocab;
    std::iota(order.begin(), order.end(), std::int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return row[a] > row[b]; });
    for (std::int64_t j = 0; j < k; ++j) {
      values[r * k + j] = row[order[j]];
      indices[r * k + j] = static_cast<double>(order[j]);
    }
  }
}

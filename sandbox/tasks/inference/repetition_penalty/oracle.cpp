// Oracle: mark the distinct previous ids of each row, then penalise the marked logits once each.
#include <leap/oracle.hpp>

#include <vector>

LEAP_ORACLE(problem) {
  constexpr std::int64_t vocab = 32000;
  const auto rows = problem.size("rows");
  const auto seq = problem.size("seq");
  const double penalty = problem.scalar("penalty");
  const auto logits = problem.in("logits");
  const auto prev_ids = problem.in("prev_ids");
  auto out = problem.out("out");
  std::vector<bool> seen(vocab);
  for (std::int64_t r = 0; r < rows; ++r) {
    seen.assign(vocab, false);
    for (std::int64_t j = 0; j < seq; ++j) seen[static_cast<std::size_t>(prev_ids[r * seq + j])] = true;
    for (std::int64_t c = 0; c < vocab; ++c) {
      const double v = logits[r * vocab + c];
      out[r * vocab + c] = !seen[static_cast<std::size_t>(c)] ? v : (v < 0 ? v * penalty : v / penalty);
    }
  }
}

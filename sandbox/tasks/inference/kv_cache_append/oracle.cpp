// Oracle: cache[s][positions[s] + i] = new[s][i] for key and value (the caches arrive holding their old
// contents), and new_lengths[s] = positions[s] + new_tokens.
#include <leap/oracle.hpp>

namespace {

void append(std::span<double> cache, std::span<const double> fresh, std::span<const double> positions, std::int64_t seqs,
            std::int64_t new_tokens, std::int64_t row) {
  for (std::int64_t s = 0; s < seqs; ++s)
    for (std::int64_t i = 0; i < new_tokens; ++i) {
      const std::int64_t slot = static_cast<std::int64_t>(positions[s]) + i;
      for (std::int64_t e = 0; e < row; ++e) cache[(s * 2048 + slot) * row + e] = fresh[(s * new_tokens + i) * row + e];
    }
}

}  // namespace

LEAP_ORACLE(problem) {
  const auto seqs = problem.size("seqs");
  const auto new_tokens = problem.size("new_tokens");
  const auto row = problem.size("kv_heads") * problem.size("head_dim");
  const auto positions = problem.in("positions");
  append(problem.out("key_cache"), problem.in("key"), positions, seqs, new_tokens, row);
  append(problem.out("value_cache"), problem.in("value"), positions, seqs, new_tokens, row);
  auto new_lengths = problem.out("new_lengths");
  for (std::int64_t s = 0; s < seqs; ++s) new_lengths[s] = positions[s] + static_cast<double>(new_tokens);
}

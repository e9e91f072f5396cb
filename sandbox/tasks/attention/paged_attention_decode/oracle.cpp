// Oracle: for each sequence and query head, gather the context's keys and values through the block table and
// compute softmax(scale * q K^T) V in double.
#include <leap/oracle.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

LEAP_ORACLE(problem) {
  const auto seqs = problem.size("seqs");
  const auto kv_heads = problem.size("kv_heads");
  const auto group = problem.size("group");
  const auto head_dim = problem.size("head_dim");
  const auto heads = kv_heads * group;
  const double scale = problem.scalar("scale");
  const auto q = problem.in("q");
  const auto k_cache = problem.in("k_cache");
  const auto v_cache = problem.in("v_cache");
  const auto block_tables = problem.in("block_tables");
  const auto context_lens = problem.in("context_lens");
  auto out = problem.out("out");
  std::vector<double> score;
  for (std::int64_t s = 0; s < seqs; ++s) {
    const auto ctx = static_cast<std::int64_t>(context_lens[s]);
    // Where token t of this sequence keeps its key/value row for KV head g.
    auto row_of = [&](std::int64_t t, std::int64_t g) {
      const auto physical = static_cast<std::int64_t>(block_tables[s * 128 + t / 16]);
      return ((physical * 16 + t % 16) * kv_heads + g) * head_dim;
    };
    for (std::int64_t h = 0; h < heads; ++h) {
      const std::int64_t g = h / group;
      const double* query = q.data() + (s * heads + h) * head_dim;
      score.assign(static_cast<std::size_t>(ctx), 0.0);
      for (std::int64_t t = 0; t < ctx; ++t) {
        double dot = 0.0;
        for (std::int64_t d = 0; d < head_dim; ++d) dot += query[d] * k_cache[row_of(t, g) + d];
        score[t] = scale * dot;
      }
      const double peak = *std::max_element(score.begin(), score.end());
      double total = 0.0;
      for (double& v : score) total += (v = std::exp(v - peak));
      for (std::int64_t d = 0; d < head_dim; ++d) {
        double acc = 0.0;
        for (std::int64_t t = 0; t < ctx; ++t) acc += score[t] * v_cache[row_of(t, g) + d];
        out[(s * heads + h) * head_dim + d] = acc / total;
      }
    }
  }
}

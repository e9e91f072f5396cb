// Oracle: the rotate-half rotary embedding, v' = v * cos + rotate_half(v) * sin with rotate_half(v) = (-v2, v1),
// applied to every head of query and key, in double.
#include <leap/oracle.hpp>

#include <vector>

namespace {

void apply(std::span<double> v, std::int64_t tokens, std::int64_t n_heads, std::int64_t half, std::span<const double> pos,
           std::span<const double> cache) {
  const std::int64_t dim = 2 * half;
  std::vector<double> rotated(static_cast<std::size_t>(dim));
  for (std::int64_t t = 0; t < tokens; ++t) {
    const auto p = static_cast<std::int64_t>(pos[t]);
    const double* cos_row = cache.data() + p * dim;        // cos for i < half
    const double* sin_row = cache.data() + p * dim + half;  // sin for i < half
    for (std::int64_t h = 0; h < n_heads; ++h) {
      double* vec = v.data() + (t * n_heads + h) * dim;
      for (std::int64_t d = 0; d < dim; ++d) {
        const std::int64_t i = d % half;
        const double other = d < half ? -vec[d + half] : vec[d - half];
        rotated[d] = vec[d] * cos_row[i] + other * sin_row[i];
      }
      for (std::int64_t d = 0; d < dim; ++d) vec[d] = rotated[d];
    }
  }
}

}  // namespace

LEAP_ORACLE(problem) {
  const auto tokens = problem.size("tokens");
  const auto half = problem.size("half_dim");
  const auto pos = problem.in("positions");
  const auto cache = problem.in("cos_sin_cache");
  apply(problem.out("query"), tokens, problem.size("heads"), half, pos, cache);
  apply(problem.out("key"), tokens, problem.size("kv_heads"), half, pos, cache);
}

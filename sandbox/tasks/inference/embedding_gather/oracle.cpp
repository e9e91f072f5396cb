// Oracle: out[t] = table[ids[t]], row by row.
#include <leap/oracle.hpp>

LEAP_ORACLE(problem) {
  const auto tokens = problem.size("tokens");
  const auto dim = problem.size("dim");
  const auto ids = problem.in("ids");
  const auto table = problem.in("table");
  auto out = problem.out("out");
  for (std::int64_t t = 0; t < tokens; ++t) {
    const auto id = static_cast<std::int64_t>(ids[t]);
    for (std::int64_t c = 0; c < dim; ++c) out[t * dim + c] = table[id * dim + c];
  }
}

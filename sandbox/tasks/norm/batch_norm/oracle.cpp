// Oracle: torch.nn.functional.batch_norm(x, None, None, weight, bias, training=True, eps=eps) for x of
// shape [batch, channels, height, width]: per channel, the mean and biased variance over batch,
// height and width, in double.
#include <leap/oracle.hpp>

#include <cmath>
#include <cstdint>

LEAP_ORACLE(problem) {
  const std::int64_t batch = problem.size("batch"), channels = problem.size("channels");
  const std::int64_t hw = problem.size("height") * problem.size("width");
  const double eps = problem.scalar("eps");
  const auto x = problem.in("x");
  const auto weight = problem.in("weight");
  const auto bias = problem.in("bias");
  auto out = problem.out("out");
  for (std::int64_t c = 0; c < channels; ++c) {
    double sum = 0.0;
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t j = 0; j < hw; ++j) sum += x[(n * channels + c) * hw + j];
    const double count = static_cast<double>(batch * hw);
    const double mean = sum / count;
    double sq = 0.0;
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t j = 0; j < hw; ++j) sq += (x[(n * channels + c) * hw + j] - mean) * (x[(n * channels + c) * hw + j] - mean);
    const double inv = 1.0 / std::sqrt(sq / count + eps);
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t j = 0; j < hw; ++j) {
        const std::int64_t at = (n * channels + c) * hw + j;
        out[at] = (x[at] - mean) * inv * weight[c] + bias[c];
      }
  }
}

// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: online_softmax_stats
// Flash-attention style running max and sum with std:: math.
#include <cmath>
#include <cfloat>

struct MaxSum { float m, s; };
__device__ MaxSum combine(MaxSum a, MaxSum b) {
  const float m = std::max(a.m, b.m);
  return {m, a.s * std::exp(a.m - m) + b.s * std::exp(b.m - m)};
}

extern "C" __global__ void online_softmax_stats(const float* x, float2* stats, int cols) {
  MaxSum acc{-FLT_MAX, 0.f};
  for (int c = threadIdx.x; c < cols; c += 32) acc = combine(acc, MaxSum{x[blockIdx.x * cols + c], 1.f});
  for (int o = 16; o > 0; o >>= 1) {
    MaxSum other{__shfl_xor_sync(0xffffffffu, acc.m, o), __shfl_xor_sync(0xffffffffu, acc.s, o)};
    acc = combine(acc, other);
  }
  if (threadIdx.x == 0) stats[blockIdx.x] = make_float2(acc.m, acc.s);
}

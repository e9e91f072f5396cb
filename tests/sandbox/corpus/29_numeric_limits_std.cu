// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: masked_max
#include <limits>

extern "C" __global__ void masked_max(const float* x, const bool* mask, float* out, int n) {
  float m = std::numeric_limits<float>::lowest();
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    if (mask[i]) m = fmaxf(m, x[i]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x == 0) out[blockIdx.x] = m == std::numeric_limits<float>::lowest() ? -std::numeric_limits<float>::infinity() : m;
}

// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: softmax
// One warp per row: max and sum by shuffles, FLT_MAX from <cfloat>.
#include <cuda_runtime.h>
#include <cfloat>
#include <cmath>

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

extern "C" __global__ void softmax(const float* x, float* y, int rows, int cols) {
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float* in = x + static_cast<size_t>(row) * cols;
  float m = -FLT_MAX;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, in[c]);
  m = warp_max(m);
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += expf(in[c] - m);
  s = warp_sum(s);
  for (int c = lane; c < cols; c += 32) y[static_cast<size_t>(row) * cols + c] = expf(in[c] - m) / s;
}

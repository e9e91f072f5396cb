// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: row_sum
#include <cuda_runtime.h>

template <int WIDTH = 32>
__device__ float warp_reduce(float v) {
#pragma unroll
  for (int o = WIDTH / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);
  return v;
}

extern "C" __global__ void row_sum(const float* x, float* out, int cols) {
  __shared__ float partial[32];
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += x[blockIdx.x * cols + c];
  s = warp_reduce(s);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.f;
    s = warp_reduce(s);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
  }
}

// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: warp_max_rows
#include <cub/warp/warp_reduce.cuh>
#include <cfloat>

extern "C" __global__ void warp_max_rows(const float* x, float* out, int cols) {
  using WarpReduce = cub::WarpReduce<float>;
  __shared__ typename WarpReduce::TempStorage storage[4];
  const int warp = threadIdx.x / 32;
  const int row = blockIdx.x * 4 + warp;
  float m = -FLT_MAX;
  for (int c = threadIdx.x % 32; c < cols; c += 32) m = fmaxf(m, x[row * cols + c]);
  const float r = WarpReduce(storage[warp]).Reduce(m, cuda::maximum<float>{});
  if (threadIdx.x % 32 == 0) out[row] = r;
}

// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: block_sum_half
// The benchmark's CUB kernel shape: cuda_fp16 inputs, a CUB block reduction in float.
#include <cuda_fp16.h>
#include <cub/block/block_reduce.cuh>

extern "C" __global__ void block_sum_half(const __half* x, float* out, int n) {
  using Reduce = cub::BlockReduce<float, 256>;
  __shared__ typename Reduce::TempStorage storage;
  float v = 0.f;
  for (int i = blockIdx.x * 256 + threadIdx.x; i < n; i += 256 * gridDim.x) v += __half2float(x[i]);
  const float total = Reduce(storage).Sum(v);
  if (threadIdx.x == 0) atomicAdd(out, total);
}

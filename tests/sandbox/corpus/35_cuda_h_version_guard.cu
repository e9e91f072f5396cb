// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: fill
#include <cuda.h>

extern "C" __global__ void fill(float* x, float v, int n) {
#if CUDA_VERSION >= 11000
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = v;
#endif
}

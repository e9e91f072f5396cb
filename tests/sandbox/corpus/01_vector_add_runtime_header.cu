// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: vector_add
// The most common shape of all: the runtime header left in, as nvcc users write it.
#include <cuda_runtime.h>

extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

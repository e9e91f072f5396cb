// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: histogram256
#include <stdint.h>

extern "C" __global__ void histogram256(const uint8_t* data, unsigned int* bins, size_t n) {
  __shared__ unsigned int local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)blockDim.x * gridDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}

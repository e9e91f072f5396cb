// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: dropout
#include <curand_kernel.h>

extern "C" __global__ void dropout(const float* x, float* y, float p, unsigned long long seed, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  curandStatePhilox4_32_10_t state;
  curand_init(seed, i, 0, &state);
  const float u = curand_uniform(&state);
  y[i] = u < p ? 0.f : x[i] / (1.f - p);
}

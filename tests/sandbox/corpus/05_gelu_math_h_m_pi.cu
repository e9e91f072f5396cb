// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: gelu
#include <math.h>

extern "C" __global__ void gelu(const float* x, float* y, int n) {
  const float k = sqrtf(2.0f / (float)M_PI);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + tanhf(k * (v + 0.044715f * v * v * v)));
  }
}

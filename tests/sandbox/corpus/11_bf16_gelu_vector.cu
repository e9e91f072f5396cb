// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: bf16_relu_scale
#include <cuda_bf16.h>

extern "C" __global__ void bf16_relu_scale(const __nv_bfloat162* x, __nv_bfloat162* y, float scale, int n2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n2) return;
  float2 f = __bfloat1622float2(x[i]);
  f.x = fmaxf(f.x, 0.f) * scale;
  f.y = fmaxf(f.y, 0.f) * scale;
  y[i] = __float22bfloat162_rn(f);
}

// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: quantize_e4m3
#include <cuda_fp8.h>

extern "C" __global__ void quantize_e4m3(const float* x, __nv_fp8_e4m3* q, float inv_scale, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) q[i] = __nv_fp8_e4m3(x[i] * inv_scale);
}

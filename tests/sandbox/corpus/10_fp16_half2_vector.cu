// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: half2_axpy
// fp16 vector math two lanes at a time.
#include <cuda_fp16.h>

extern "C" __global__ void half2_axpy(const __half2* x, __half2* y, __half a, int n2) {
  const __half2 a2 = __half2half2(a);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n2) y[i] = __hfma2(a2, x[i], y[i]);
}

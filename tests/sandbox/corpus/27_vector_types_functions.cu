// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: complex_mul
#include <vector_types.h>
#include <vector_functions.h>

extern "C" __global__ void complex_mul(const float2* a, const float2* b, float2* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = make_float2(a[i].x * b[i].x - a[i].y * b[i].y, a[i].x * b[i].y + a[i].y * b[i].x);
}

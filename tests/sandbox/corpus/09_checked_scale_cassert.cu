// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: checked_scale
#include <cassert>

extern "C" __global__ void checked_scale(float* x, float a, int n) {
  assert(blockDim.x % 32 == 0);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

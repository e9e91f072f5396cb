// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: debug_print
#include <cstdio>

extern "C" __global__ void debug_print(const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) printf("n = %d, x[0] = %f\n", n, x[0]);
  if (i < n && x[i] != x[i]) std::printf("NaN at %d\n", i);
}

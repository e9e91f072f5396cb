// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: argmax_rows
#include <climits>
#include <cfloat>

extern "C" __global__ void argmax_rows(const float* x, int* out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float best = -FLT_MAX;
  int arg = INT_MAX;
  for (int c = 0; c < cols; ++c) {
    const float v = x[r * cols + c];
    if (v > best) { best = v; arg = c; }
  }
  out[r] = arg == INT_MAX ? -1 : arg;
}

// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: poly_eval
#include <cuda/std/array>
#include <cuda/std/cmath>

extern "C" __global__ void poly_eval(const float* x, float* y, int n) {
  constexpr cuda::std::array<float, 4> c = {1.f, -0.5f, 0.25f, -0.125f};
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.f;
  for (int k = static_cast<int>(c.size()) - 1; k >= 0; --k) acc = acc * x[i] + c[k];
  y[i] = cuda::std::abs(acc);
}

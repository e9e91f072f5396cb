// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: rope
#include <math_constants.h>

extern "C" __global__ void rope(float2* q, int dim_pairs, int positions) {
  const int pos = blockIdx.x, p = threadIdx.x;
  if (pos >= positions || p >= dim_pairs) return;
  const float theta = pos * powf(10000.f, -2.f * p / (2.f * dim_pairs));
  float s, c;
  sincosf(fmodf(theta, 2.f * CUDART_PI_F), &s, &c);
  float2 v = q[pos * dim_pairs + p];
  q[pos * dim_pairs + p] = make_float2(v.x * c - v.y * s, v.x * s + v.y * c);
}

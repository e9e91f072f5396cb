// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: combine
#include <thrust/functional.h>

template <typename Op>
__device__ void apply(const float* a, const float* b, float* c, int n, Op op) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = op(a[i], b[i]);
}

extern "C" __global__ void combine(const float* a, const float* b, float* c, int n) {
  apply(a, b, c, n, thrust::plus<float>());
}

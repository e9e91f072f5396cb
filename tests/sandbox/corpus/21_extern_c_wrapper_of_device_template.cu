// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: relu_f32
template <typename T>
__device__ __forceinline__ void relu_body(const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] > T(0) ? x[i] : T(0);
}

extern "C" __global__ void relu_f32(const float* x, float* y, int n) { relu_body<float>(x, y, n); }

// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels:
// expect-advice: the kernel template 'add_bias' (kernel.cu line 8) is never instantiated
// expect-advice: template __global__ void add_bias<float>(float* __restrict__ y, const float* __restrict__ bias, int n, int cols);
// The host launcher that instantiated it was removed: nothing is left to launch, and the sandbox says so.
template <typename scalar_t>
__global__ void add_bias(scalar_t* __restrict__ y, const scalar_t* __restrict__ bias, int n, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += bias[i % cols];
}

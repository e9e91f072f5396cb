// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: saxpy
#include <cuda_runtime_api.h>
#include <device_launch_parameters.h>
#include <stdio.h>

extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] = a * x[i] + y[i];
}

// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: staged_copy
#include <cuda_pipeline.h>

extern "C" __global__ void staged_copy(const float4* in, float4* out, int n4) {
  __shared__ float4 stage[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4) __pipeline_memcpy_async(&stage[threadIdx.x], &in[i], sizeof(float4));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  if (i < n4) out[i] = stage[threadIdx.x];
}

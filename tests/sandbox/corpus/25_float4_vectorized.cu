// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: add_vec4
extern "C" __global__ void add_vec4(const float* a, const float* b, float* c, int n4) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n4) return;
  const float4 x = reinterpret_cast<const float4*>(a)[i];
  const float4 y = reinterpret_cast<const float4*>(b)[i];
  reinterpret_cast<float4*>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
}

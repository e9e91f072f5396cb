// Subtly wrong: erf(x * sqrt(2)) instead of erf(x / sqrt(2)).
#include <cuda_bf16.h>

__device__ __forceinline__ float act(float v) {
  return 0.5f * v * (1.0f + erff(v * 1.41421356f));
}

extern "C" __global__ void gelu_bf16(const __nv_bfloat16* x, __nv_bfloat16* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = __bfloat162float(x[i]);
    out[i] = __float2bfloat16(act(v));
  }
}

// Does not compile: a __half is assigned to a __half2.
#include <cuda_fp16.h>

__device__ __forceinline__ float act(float v) {
  return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

extern "C" __global__ void gelu_erf_fp16(const __half* x, __half* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const __half2 v = x[i];
    out[i] = __float2half(act(v));
  }
}

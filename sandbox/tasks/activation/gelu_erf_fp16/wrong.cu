// Subtly wrong: the 1/sqrt(2) inside erf is forgotten.
#include <cuda_fp16.h>

__device__ __forceinline__ float act(float v) {
  return 0.5f * v * (1.0f + erff(v));
}

extern "C" __global__ void gelu_erf_fp16(const __half* x, __half* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = __half2float(x[i]);
    out[i] = __float2half(act(v));
  }
}

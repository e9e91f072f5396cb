// Reference: one element per thread, computed in float and rounded to half.
#include <cuda_fp16.h>

__device__ __forceinline__ float act(float v) {
  return v / (1.0f + expf(-v));
}

extern "C" __global__ void swish_fp16(const __half* x, __half* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = __half2float(x[i]);
    out[i] = __float2half(act(v));
  }
}

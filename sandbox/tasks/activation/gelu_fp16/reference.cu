// Reference: two scalar half elements per thread, 256 apart (coalesced but 2-byte accesses).
#include <cuda_fp16.h>

__device__ __forceinline__ float gelu(float v) {
  return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
}

extern "C" __global__ void gelu_fp16(const __half* x, __half* out, int n) {
  const long long base = static_cast<long long>(blockIdx.x) * 512 + threadIdx.x;
  for (int k = 0; k < 2; ++k) {
    const long long i = base + k * 256;
    if (i < n) out[i] = __float2half(gelu(__half2float(x[i])));
  }
}

// Subtly wrong: 2 * sigmoid(x) - 1 is tanh(x / 2), not tanh(x).
#include <cuda_bf16.h>

__device__ __forceinline__ float act(float v) {
  return 2.0f / (1.0f + expf(-v)) - 1.0f;
}

extern "C" __global__ void tanh_bf16(const __nv_bfloat16* x, __nv_bfloat16* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = __bfloat162float(x[i]);
    out[i] = __float2bfloat16(act(v));
  }
}

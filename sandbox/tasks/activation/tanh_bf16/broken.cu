// Does not compile: __bfloat162float is called with two arguments.
#include <cuda_bf16.h>

__device__ __forceinline__ float act(float v) {
  return tanhf(v);
}

extern "C" __global__ void tanh_bf16(const __nv_bfloat16* x, __nv_bfloat16* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = __bfloat162float(x[i], 0);
    out[i] = __float2bfloat16(act(v));
  }
}

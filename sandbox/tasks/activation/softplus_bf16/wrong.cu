// Subtly wrong: the 1 + inside the log is lost: log(exp(x)) = x, wrong on the whole soft side.
#include <cuda_bf16.h>

__device__ __forceinline__ float act(float v) {
  return v > 20.0f ? v : logf(expf(v));
}

extern "C" __global__ void softplus_bf16(const __nv_bfloat16* x, __nv_bfloat16* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = __bfloat162float(x[i]);
    out[i] = __float2bfloat16(act(v));
  }
}

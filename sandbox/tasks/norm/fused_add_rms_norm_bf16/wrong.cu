// Subtly wrong: the output is normalised correctly but the updated residual is never stored back.
#include <cuda_bf16.h>

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

extern "C" __global__ void fused_add_rms_norm_bf16(const __nv_bfloat16* x, __nv_bfloat16* residual,
                                                   const __nv_bfloat16* weight, __nv_bfloat16* out, int rows,
                                                   int cols, float eps) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long base = static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += 32) {
    const float hf = __bfloat162float(__float2bfloat16(__bfloat162float(residual[base + c]) + __bfloat162float(x[base + c])));
    s += hf * hf;
  }
  const float inv = rsqrtf(warp_sum(s) / cols + eps);
  for (int c = threadIdx.x; c < cols; c += 32) {
    const float hf = __bfloat162float(__float2bfloat16(__bfloat162float(residual[base + c]) + __bfloat162float(x[base + c])));
    out[base + c] = __float2bfloat16(hf * inv * __bfloat162float(weight[c]));
  }
}

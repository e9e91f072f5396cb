// Does not compile: a bfloat16 pair is converted with the half-precision intrinsic's name.
#include <cuda_bf16.h>

extern "C" __global__ void fused_add_rms_norm_bf16(const __nv_bfloat16* x, __nv_bfloat16* residual,
                                                   const __nv_bfloat16* weight, __nv_bfloat16* out, int rows,
                                                   int cols, float eps) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long base = static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += 32) {
    const float hf = __half2float(residual[base + c]) + __bfloat162float(x[base + c]);
    residual[base + c] = __float2bfloat16(hf);
    s += hf * hf;
  }
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
  const float inv = rsqrtf(s / cols + eps);
  for (int c = threadIdx.x; c < cols; c += 32)
    out[base + c] = __float2bfloat16(__bfloat162float(residual[base + c]) * inv * __bfloat162float(weight[c]));
}

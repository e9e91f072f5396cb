// Faster: __nv_bfloat162 pairs when cols is even, a butterfly shuffle instead of shared memory and a serial lane.
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
  if (cols % 2 == 0) {
    const __nv_bfloat162* x2 = reinterpret_cast<const __nv_bfloat162*>(x + base);
    __nv_bfloat162* r2 = reinterpret_cast<__nv_bfloat162*>(residual + base);
    const __nv_bfloat162* w2 = reinterpret_cast<const __nv_bfloat162*>(weight);
    __nv_bfloat162* o2 = reinterpret_cast<__nv_bfloat162*>(out + base);
    for (int c = threadIdx.x; c < cols / 2; c += 32) {
      const float2 a = __bfloat1622float2(x2[c]);
      const float2 b = __bfloat1622float2(r2[c]);
      const __nv_bfloat162 h = __floats2bfloat162_rn(a.x + b.x, a.y + b.y);
      r2[c] = h;
      const float2 hf = __bfloat1622float2(h);
      s += hf.x * hf.x + hf.y * hf.y;
    }
    const float inv = rsqrtf(warp_sum(s) / cols + eps);
    for (int c = threadIdx.x; c < cols / 2; c += 32) {
      const float2 hf = __bfloat1622float2(r2[c]);
      const float2 w = __bfloat1622float2(w2[c]);
      o2[c] = __floats2bfloat162_rn(hf.x * inv * w.x, hf.y * inv * w.y);
    }
    return;
  }
  for (int c = threadIdx.x; c < cols; c += 32) {
    const __nv_bfloat16 h = __float2bfloat16(__bfloat162float(residual[base + c]) + __bfloat162float(x[base + c]));
    residual[base + c] = h;
    const float hf = __bfloat162float(h);
    s += hf * hf;
  }
  const float inv = rsqrtf(warp_sum(s) / cols + eps);
  for (int c = threadIdx.x; c < cols; c += 32)
    out[base + c] = __float2bfloat16(__bfloat162float(residual[base + c]) * inv * __bfloat162float(weight[c]));
}

// Does not compile: dm is declared twice.
// leap-launch: layer_norm_bf16 grid=rows block=512
#include <cuda_bf16.h>

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ float2 block_sum2(float a, float b) {
  __shared__ float2 part[32];
  __shared__ float2 total;
  a = warp_sum(a);
  b = warp_sum(b);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = (blockDim.x + 31) / 32;
  if (lane == 0) part[warp] = make_float2(a, b);
  __syncthreads();
  if (warp == 0) {
    float2 v = lane < warps ? part[lane] : make_float2(0.0f, 0.0f);
    v.x = warp_sum(v.x);
    v.y = warp_sum(v.y);
    if (lane == 0) total = v;
  }
  __syncthreads();
  return total;
}

extern "C" __global__ void layer_norm_bf16(const __nv_bfloat16* x, const __nv_bfloat16* weight, const __nv_bfloat16* bias,
                                           __nv_bfloat16* out, int rows, int cols, float eps) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  const __nv_bfloat16* p = x + static_cast<long long>(row) * cols;
  __nv_bfloat16* q = out + static_cast<long long>(row) * cols;
  const float shift = __bfloat162float(p[0]);
  const bool pairs = (cols & 1) == 0;
  float s = 0.0f, s2 = 0.0f;
  if (pairs) {
    for (int c = threadIdx.x; c < cols / 2; c += blockDim.x) {
      const float2 v = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162*>(p)[c]);
      const float a = v.x - shift, b = v.y - shift;
      s += a + b;
      s2 += a * a + b * b;
    }
  } else {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
      const float a = __bfloat162float(p[c]) - shift;
      s += a;
      s2 += a * a;
    }
  }
  const float2 t = block_sum2(s, s2);
  const float dm = t.y;
  const float dm = t.x / cols;
  const float inv = rsqrtf(fmaxf(t.y / cols - dm * dm, 0.0f) + eps);
  const float mean = shift + dm;
  if (pairs) {
    for (int c = threadIdx.x; c < cols / 2; c += blockDim.x) {
      const float2 v = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162*>(p)[c]);
      const float2 w = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162*>(weight)[c]);
      const float2 b = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162*>(bias)[c]);
      reinterpret_cast<__nv_bfloat162*>(q)[c] = __floats2bfloat162_rn((v.x - mean) * inv * w.x + b.x, (v.y - mean) * inv * w.y + b.y);
    }
  } else {
    for (int c = threadIdx.x; c < cols; c += blockDim.x)
      q[c] = __float2bfloat16((__bfloat162float(p[c]) - mean) * inv * __bfloat162float(weight[c]) + __bfloat162float(bias[c]));
  }
}

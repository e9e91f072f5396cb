// Low precision: one thread per row; the mean's and the variance's sums are accumulated in bfloat16
// (every partial sum rounded), everything else in float as the task asks.
// leap-launch: layer_norm_bf16 grid=ceil_div(rows, 256) block=256
#include <cuda_bf16.h>

extern "C" __global__ void layer_norm_bf16(const __nv_bfloat16* x, const __nv_bfloat16* weight, const __nv_bfloat16* bias,
                                           __nv_bfloat16* out, int rows, int cols, float eps) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const __nv_bfloat16* p = x + static_cast<long long>(row) * cols;
  __nv_bfloat16* q = out + static_cast<long long>(row) * cols;
  __nv_bfloat16 s = __float2bfloat16(0.0f);
  for (int c = 0; c < cols; ++c) s = __hadd(s, p[c]);
  const float mean = __bfloat162float(s) / cols;
  __nv_bfloat16 v = __float2bfloat16(0.0f);
  for (int c = 0; c < cols; ++c) {
    const float d = __bfloat162float(p[c]) - mean;
    v = __hadd(v, __float2bfloat16(d * d));
  }
  const float inv = 1.0f / sqrtf(__bfloat162float(v) / cols + eps);
  for (int c = 0; c < cols; ++c)
    q[c] = __float2bfloat16((__bfloat162float(p[c]) - mean) * inv * __bfloat162float(weight[c]) + __bfloat162float(bias[c]));
}

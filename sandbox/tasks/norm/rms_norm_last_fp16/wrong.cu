// Subtly wrong: each warp normalises by its own partial sum; the warps' partials are never combined.
#include <cuda_fp16.h>

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

extern "C" __global__ void rms_norm_last_fp16(const __half* x, const __half* weight, __half* out, int rows,
                                              int cols, float eps) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  const __half* p = x + static_cast<long long>(row) * cols;
  __half* q = out + static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = __half2float(p[c]);
    s += v * v;
  }
  s = warp_sum(s) * (blockDim.x / 32);
  const float inv = rsqrtf(s / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    q[c] = __float2half(__half2float(p[c]) * inv * __half2float(weight[c]));
}

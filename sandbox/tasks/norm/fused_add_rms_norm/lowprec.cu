// Low precision: the sum of squares is kept in __half (values near 3 pass 65504 on long rows and overflow);
// everything else is right.
#include <cuda_fp16.h>

__device__ __forceinline__ __half warp_sum(__half v) {
  for (int o = 16; o > 0; o /= 2) v = __hadd(v, __float2half(__shfl_xor_sync(0xffffffffu, __half2float(v), o)));
  return v;
}

extern "C" __global__ void fused_add_rms_norm(const float* x, float* residual, const float* weight, float* out,
                                              int rows, int cols, float eps) {
  __shared__ float scratch[32];  // half values, stored exactly as float
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long base = static_cast<long long>(row) * cols;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  __half s = __float2half(0.0f);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float h = residual[base + c] + x[base + c];
    residual[base + c] = h;
    s = __hadd(s, __float2half(h * h));
  }
  s = warp_sum(s);
  if (lane == 0) scratch[warp] = __half2float(s);
  __syncthreads();
  s = warp_sum(__float2half(lane < warps ? scratch[lane] : 0.0f));
  const float inv = rsqrtf(__half2float(s) / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[base + c] = residual[base + c] * inv * weight[c];
}

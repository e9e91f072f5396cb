// Faster: pairs of bfloat16 values loaded as one 4-byte __nv_bfloat162 when rows are 4-byte aligned (cols
// even), float accumulation, warp shuffles instead of a barrier per tree level.
#include <cuda_bf16.h>

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

extern "C" __global__ void sum_bf16(const __nv_bfloat16* x, __nv_bfloat16* out, int rows, int cols) {
  __shared__ float warp_partial[32];
  const int row = blockIdx.x;
  const __nv_bfloat16* p = x + static_cast<long long>(row) * cols;
  float s = 0.0f;
  if ((cols & 1) == 0) {
    const __nv_bfloat162* p2 = reinterpret_cast<const __nv_bfloat162*>(p);
    for (int c = threadIdx.x; c < cols / 2; c += blockDim.x) {
      const float2 v = __bfloat1622float2(p2[c]);
      s += v.x + v.y;
    }
  } else {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __bfloat162float(p[c]);
  }
  s = warp_sum(s);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_partial[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < blockDim.x / 32 ? warp_partial[lane] : 0.0f;
    s = warp_sum(s);
    if (lane == 0 && row < rows) out[row] = __float2bfloat16(s);
  }
}

#include <math_constants.h>
// Low precision: the sum of exponentials is accumulated in __half (per thread, then through the warps);
// everything else is right.
#include <cuda_fp16.h>

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ __half warp_sum(__half v) {
  for (int o = 16; o > 0; o /= 2) v = __hadd(v, __float2half(__shfl_xor_sync(0xffffffffu, __half2float(v), o)));
  return v;
}

extern "C" __global__ void log_softmax_vocab(const float* logits, float* out, int rows, int vocab) {
  __shared__ float scratch[32];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = logits + static_cast<long long>(row) * vocab;
  float* q = out + static_cast<long long>(row) * vocab;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  float m = -CUDART_INF_F;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) m = fmaxf(m, p[c]);
  m = warp_max(m);
  if (lane == 0) scratch[warp] = m;
  __syncthreads();
  m = warp_max(lane < warps ? scratch[lane] : -CUDART_INF_F);
  __syncthreads();
  __half s = __float2half(0.0f);
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) s = __hadd(s, __float2half(expf(p[c] - m)));
  s = warp_sum(s);
  if (lane == 0) scratch[warp] = __half2float(s);
  __syncthreads();
  s = warp_sum(__float2half(lane < warps ? scratch[lane] : 0.0f));
  const float log_sum = logf(__half2float(s));
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) q[c] = p[c] - m - log_sum;
}

#include <math_constants.h>
// Faster: __half2 loads and stores when vocab is even, an online max-and-sum in one read, warp-shuffle merges.
#include <cuda_fp16.h>

__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  const float mm = fmaxf(m, m2);
  if (mm == -CUDART_INF_F) return;
  s = s * __expf(m - mm) + s2 * __expf(m2 - mm);
  m = mm;
}
__device__ __forceinline__ void push(float& m, float& s, float z) {
  if (z > m) {
    s = s * __expf(m - z) + 1.0f;
    m = z;
  } else {
    s += __expf(z - m);
  }
}

extern "C" __global__ void temperature_softmax_fp16(const __half* logits, __half* out, int rows, int vocab,
                                                    float temperature) {
  __shared__ float sm[32], ss[32];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const __half* p = logits + static_cast<long long>(row) * vocab;
  __half* q = out + static_cast<long long>(row) * vocab;
  const float inv_t = 1.0f / temperature;
  const bool pairs = vocab % 2 == 0;
  float m = -CUDART_INF_F, s = 0.0f;
  if (pairs) {
    const __half2* p2 = reinterpret_cast<const __half2*>(p);
    for (int c = threadIdx.x; c < vocab / 2; c += blockDim.x) {
      const float2 v = __half22float2(p2[c]);
      push(m, s, v.x * inv_t);
      push(m, s, v.y * inv_t);
    }
  } else {
    for (int c = threadIdx.x; c < vocab; c += blockDim.x) push(m, s, __half2float(p[c]) * inv_t);
  }
  for (int o = 16; o > 0; o /= 2) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  if (lane == 0) {
    sm[warp] = m;
    ss[warp] = s;
  }
  __syncthreads();
  m = lane < warps ? sm[lane] : -CUDART_INF_F;
  s = lane < warps ? ss[lane] : 0.0f;
  for (int o = 16; o > 0; o /= 2) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  const float inv_s = 1.0f / s;
  if (pairs) {
    const __half2* p2 = reinterpret_cast<const __half2*>(p);
    __half2* q2 = reinterpret_cast<__half2*>(q);
    for (int c = threadIdx.x; c < vocab / 2; c += blockDim.x) {
      const float2 v = __half22float2(p2[c]);
      q2[c] = __floats2half2_rn(__expf(v.x * inv_t - m) * inv_s, __expf(v.y * inv_t - m) * inv_s);
    }
  } else {
    for (int c = threadIdx.x; c < vocab; c += blockDim.x) q[c] = __float2half(__expf(__half2float(p[c]) * inv_t - m) * inv_s);
  }
}

#include <math_constants.h>
// Faster: one read for an online max-and-sum (float4 loads where rows are 16-byte aligned), warp-shuffle merges,
// and a second read to write.
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

extern "C" __global__ void log_softmax_vocab(const float* logits, float* out, int rows, int vocab) {
  __shared__ float sm[32], ss[32];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = logits + static_cast<long long>(row) * vocab;
  float* q = out + static_cast<long long>(row) * vocab;
  const bool vec = vocab % 4 == 0;
  float m = -CUDART_INF_F, s = 0.0f;
  if (vec) {
    for (int c = threadIdx.x * 4; c < vocab; c += blockDim.x * 4) {
      const float4 v = *reinterpret_cast<const float4*>(p + c);
      push(m, s, v.x);
      push(m, s, v.y);
      push(m, s, v.z);
      push(m, s, v.w);
    }
  } else {
    for (int c = threadIdx.x; c < vocab; c += blockDim.x) push(m, s, p[c]);
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
  const float shift = m + logf(s);
  if (vec) {
    for (int c = threadIdx.x * 4; c < vocab; c += blockDim.x * 4) {
      const float4 v = *reinterpret_cast<const float4*>(p + c);
      *reinterpret_cast<float4*>(q + c) = make_float4(v.x - shift, v.y - shift, v.z - shift, v.w - shift);
    }
  } else {
    for (int c = threadIdx.x; c < vocab; c += blockDim.x) q[c] = p[c] - shift;
  }
}

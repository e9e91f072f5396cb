#include <math_constants.h>
// Faster: one read of the row for an online max-and-sum (each thread rescales its running sum when its maximum
// grows), warp-shuffle merges, a multiply by 1/T and by 1/sum, and a second read to write.
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  const float mm = fmaxf(m, m2);
  if (mm == -CUDART_INF_F) return;
  s = s * __expf(m - mm) + s2 * __expf(m2 - mm);
  m = mm;
}

extern "C" __global__ void temperature_softmax(const float* logits, float* out, int rows, int vocab, float temperature) {
  __shared__ float sm[32], ss[32];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = logits + static_cast<long long>(row) * vocab;
  float* q = out + static_cast<long long>(row) * vocab;
  const float inv_t = 1.0f / temperature;
  float m = -CUDART_INF_F, s = 0.0f;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) {
    const float z = p[c] * inv_t;
    if (z > m) {
      s = s * __expf(m - z) + 1.0f;
      m = z;
    } else {
      s += __expf(z - m);
    }
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
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) q[c] = __expf(p[c] * inv_t - m) * inv_s;
}

#include <math_constants.h>
// Faster: the query staged in shared memory, one warp per token for the scores (coalesced key reads and a
// shuffle reduction instead of one thread walking a whole key row), warp-shuffle maximum and sum.
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

extern "C" __global__ void paged_attention_decode(const float* q, const float* k_cache, const float* v_cache,
                                                  const int* block_tables, const int* context_lens, float* out, int seqs,
                                                  int kv_heads, int group, int head_dim, float scale) {
  __shared__ float weight[2048];
  __shared__ float qs[1024];
  __shared__ float scratch[32];
  const int h = blockIdx.x, s = blockIdx.y;
  const int heads = kv_heads * group;
  if (h >= heads || s >= seqs) return;
  const int kvh = h / group, ctx = context_lens[s];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const int* table = block_tables + static_cast<long long>(s) * 128;
  const float* qv = q + (static_cast<long long>(s) * heads + h) * head_dim;
  const bool staged = head_dim <= 1024;
  if (staged)
    for (int d = threadIdx.x; d < head_dim; d += blockDim.x) qs[d] = qv[d];
  __syncthreads();
  const float* qq = staged ? qs : qv;
  float m = -CUDART_INF_F;
  for (int t = warp; t < ctx; t += warps) {
    const float* kv = k_cache + ((static_cast<long long>(table[t / 16]) * 16 + t % 16) * kv_heads + kvh) * head_dim;
    float dot = 0.0f;
    for (int d = lane; d < head_dim; d += 32) dot += qq[d] * kv[d];
    dot = warp_sum(dot) * scale;
    if (lane == 0) weight[t] = dot;
    m = fmaxf(m, dot);
  }
  if (lane == 0) scratch[warp] = m;
  __syncthreads();
  m = warp_max(lane < warps ? scratch[lane] : -CUDART_INF_F);
  __syncthreads();
  float l = 0.0f;
  for (int t = threadIdx.x; t < ctx; t += blockDim.x) {
    const float e = __expf(weight[t] - m);
    weight[t] = e;
    l += e;
  }
  l = warp_sum(l);
  if (lane == 0) scratch[warp] = l;
  __syncthreads();
  l = warp_sum(lane < warps ? scratch[lane] : 0.0f);
  const float inv = 1.0f / l;
  float* o = out + (static_cast<long long>(s) * heads + h) * head_dim;
  for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
    float acc = 0.0f;
    for (int t = 0; t < ctx; ++t)
      acc += weight[t] * v_cache[((static_cast<long long>(table[t / 16]) * 16 + t % 16) * kv_heads + kvh) * head_dim + d];
    o[d] = acc * inv;
  }
}

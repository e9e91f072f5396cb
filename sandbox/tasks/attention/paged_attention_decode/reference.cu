#include <math_constants.h>
// Reference: block (h, s); each thread scores some tokens into shared memory, thread 0 takes the maximum and
// the sum of exponentials serially, then each thread owns output dimensions and sums over the tokens.
__device__ __forceinline__ long long cache_row(const int* table, int t, int kv_heads, int kvh, int head_dim) {
  const long long block = table[t / 16];
  return ((block * 16 + t % 16) * kv_heads + kvh) * head_dim;
}

extern "C" __global__ void paged_attention_decode(const float* q, const float* k_cache, const float* v_cache,
                                                  const int* block_tables, const int* context_lens, float* out, int seqs,
                                                  int kv_heads, int group, int head_dim, float scale) {
  __shared__ float weight[2048];
  __shared__ float row_max, row_sum;
  const int h = blockIdx.x, s = blockIdx.y;
  const int heads = kv_heads * group;
  if (h >= heads || s >= seqs) return;
  const int kvh = h / group;
  const int ctx = context_lens[s];
  const int* table = block_tables + static_cast<long long>(s) * 128;
  const float* qv = q + (static_cast<long long>(s) * heads + h) * head_dim;
  for (int t = threadIdx.x; t < ctx; t += blockDim.x) {
    const float* kv = k_cache + cache_row(table, t, kv_heads, kvh, head_dim);
    float dot = 0.0f;
    for (int d = 0; d < head_dim; ++d) dot += qv[d] * kv[d];
    weight[t] = dot * scale;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float m = -CUDART_INF_F;
    for (int t = 0; t < ctx; ++t) m = fmaxf(m, weight[t]);
    row_max = m;
  }
  __syncthreads();
  for (int t = threadIdx.x; t < ctx; t += blockDim.x) weight[t] = expf(weight[t] - row_max);
  __syncthreads();
  if (threadIdx.x == 0) {
    float l = 0.0f;
    for (int t = 0; t < ctx; ++t) l += weight[t];
    row_sum = l;
  }
  __syncthreads();
  float* o = out + (static_cast<long long>(s) * heads + h) * head_dim;
  for (int d = threadIdx.x; d < head_dim; d += blockDim.x) {
    float acc = 0.0f;
    for (int t = 0; t < ctx; ++t) acc += weight[t] * v_cache[cache_row(table, t, kv_heads, kvh, head_dim) + d];
    o[d] = acc / row_sum;
  }
}

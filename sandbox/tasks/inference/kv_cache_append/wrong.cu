// Subtly wrong: writes the cache as seqs x kv_heads x 2048 x head_dim (the head-major layout of other engines).
extern "C" __global__ void kv_cache_append(const float* key, const float* value, const int* positions, float* key_cache,
                                           float* value_cache, int* new_lengths, int seqs, int new_tokens, int kv_heads,
                                           int head_dim) {
  const int i = blockIdx.x, s = blockIdx.y;
  if (i >= new_tokens || s >= seqs) return;
  if (i == 0 && threadIdx.x == 0) new_lengths[s] = positions[s] + new_tokens;
  const long long src = (static_cast<long long>(s) * new_tokens + i) * kv_heads * head_dim;
  for (int e = threadIdx.x; e < kv_heads * head_dim; e += blockDim.x) {
    const int h = e / head_dim, d = e % head_dim;
    const long long dst = ((static_cast<long long>(s) * kv_heads + h) * 2048 + positions[s] + i) * head_dim + d;
    key_cache[dst] = key[src + e];
    value_cache[dst] = value[src + e];
  }
}

// Faster: float4 copies when a token's row (kv_heads * head_dim) is a multiple of 4, key and value interleaved.
extern "C" __global__ void kv_cache_append(const float* key, const float* value, const int* positions, float* key_cache,
                                           float* value_cache, int* new_lengths, int seqs, int new_tokens, int kv_heads,
                                           int head_dim) {
  const int i = blockIdx.x, s = blockIdx.y;
  if (i >= new_tokens || s >= seqs) return;
  if (i == 0 && threadIdx.x == 0) new_lengths[s] = positions[s] + new_tokens;
  const int row = kv_heads * head_dim;
  const long long src = (static_cast<long long>(s) * new_tokens + i) * row;
  const long long dst = (static_cast<long long>(s) * 2048 + positions[s] + i) * row;
  if (row % 4 == 0) {
    const float4* k4 = reinterpret_cast<const float4*>(key + src);
    const float4* v4 = reinterpret_cast<const float4*>(value + src);
    float4* kc = reinterpret_cast<float4*>(key_cache + dst);
    float4* vc = reinterpret_cast<float4*>(value_cache + dst);
    for (int e = threadIdx.x; e < row / 4; e += blockDim.x) {
      kc[e] = k4[e];
      vc[e] = v4[e];
    }
  } else {
    for (int e = threadIdx.x; e < row; e += blockDim.x) {
      key_cache[dst + e] = key[src + e];
      value_cache[dst + e] = value[src + e];
    }
  }
}

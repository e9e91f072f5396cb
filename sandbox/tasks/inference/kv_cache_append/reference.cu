// Reference: block (i, s) copies token i of sequence s, key then value, element by element; block (0, s) also
// writes the new length.
extern "C" __global__ void kv_cache_append(const float* key, const float* value, const int* positions, float* key_cache,
                                           float* value_cache, int* new_lengths, int seqs, int new_tokens, int kv_heads,
                                           int head_dim) {
  const int i = blockIdx.x, s = blockIdx.y;
  if (i >= new_tokens || s >= seqs) return;
  if (i == 0 && threadIdx.x == 0) new_lengths[s] = positions[s] + new_tokens;
  const long long row = static_cast<long long>(kv_heads) * head_dim;
  const long long src = (static_cast<long long>(s) * new_tokens + i) * row;
  const long long dst = (static_cast<long long>(s) * 2048 + positions[s] + i) * row;
  for (long long e = threadIdx.x; e < row; e += blockDim.x) {
    key_cache[dst + e] = key[src + e];
    value_cache[dst + e] = value[src + e];
  }
}

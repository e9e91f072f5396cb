// Reference: one block per token; each thread rotates (first-half, second-half) pairs of query, then of key.
__device__ void rotate_heads(float* v, int n_heads, int half_dim, const float* cache_row) {
  for (int k = threadIdx.x; k < n_heads * half_dim; k += blockDim.x) {
    const int head = k / half_dim, i = k % half_dim;
    float* h = v + static_cast<long long>(head) * 2 * half_dim;
    const float c = cache_row[i], s = cache_row[half_dim + i];
    const float a = h[i], b = h[half_dim + i];
    h[i] = a * c - b * s;
    h[half_dim + i] = b * c + a * s;
  }
}

extern "C" __global__ void rotary_embedding(const int* positions, float* query, float* key, const float* cos_sin_cache,
                                            int tokens, int heads, int kv_heads, int half_dim) {
  const int t = blockIdx.x;
  if (t >= tokens) return;
  const float* cache_row = cos_sin_cache + static_cast<long long>(positions[t]) * 2 * half_dim;
  rotate_heads(query + static_cast<long long>(t) * heads * 2 * half_dim, heads, half_dim, cache_row);
  rotate_heads(key + static_cast<long long>(t) * kv_heads * 2 * half_dim, kv_heads, half_dim, cache_row);
}

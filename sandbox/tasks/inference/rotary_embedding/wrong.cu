// Subtly wrong: the cos/sin row is taken at the token's index, not at positions[t].
extern "C" __global__ void rotary_embedding(const int* positions, float* query, float* key, const float* cos_sin_cache,
                                            int tokens, int heads, int kv_heads, int half_dim) {
  const int t = blockIdx.x;
  if (t >= tokens) return;
  const float* cs = cos_sin_cache + static_cast<long long>(t % 4096) * 2 * half_dim;
  for (int which = 0; which < 2; ++which) {
    float* base = which == 0 ? query + static_cast<long long>(t) * heads * 2 * half_dim
                             : key + static_cast<long long>(t) * kv_heads * 2 * half_dim;
    const int n_heads = which == 0 ? heads : kv_heads;
    for (int k = threadIdx.x; k < n_heads * half_dim; k += blockDim.x) {
      float* h = base + static_cast<long long>(k / half_dim) * 2 * half_dim;
      const int i = k % half_dim;
      const float a = h[i], b = h[half_dim + i];
      h[i] = a * cs[i] - b * cs[half_dim + i];
      h[half_dim + i] = b * cs[i] + a * cs[half_dim + i];
    }
  }
}

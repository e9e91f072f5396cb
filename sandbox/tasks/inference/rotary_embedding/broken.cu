// Does not compile: the head pointer h is used one line before it is declared.
extern "C" __global__ void rotary_embedding(const int* positions, float* query, float* key, const float* cos_sin_cache,
                                            int tokens, int heads, int kv_heads, int half_dim) {
  const int t = blockIdx.x;
  if (t >= tokens) return;
  const float* cs = cos_sin_cache + static_cast<long long>(positions[t]) * 2 * half_dim;
  for (int k = threadIdx.x; k < heads * half_dim; k += blockDim.x) {
    const int i = k % half_dim;
    const float a = h[i], b = h[half_dim + i];
    float* h = query + (static_cast<long long>(t) * heads + k / half_dim) * 2 * half_dim;
    h[i] = a * cs[i] - b * cs[half_dim + i];
    h[half_dim + i] = b * cs[i] + a * cs[half_dim + i];
  }
}

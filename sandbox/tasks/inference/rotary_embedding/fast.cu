// Faster: the token's cos/sin row staged once in shared memory, float4 accesses when half_dim is a multiple of 4.
extern "C" __global__ void rotary_embedding(const int* positions, float* query, float* key, const float* cos_sin_cache,
                                            int tokens, int heads, int kv_heads, int half_dim) {
  __shared__ float cache_row[1024];
  const int t = blockIdx.x;
  if (t >= tokens) return;
  const int dim = 2 * half_dim;
  const float* src = cos_sin_cache + static_cast<long long>(positions[t]) * dim;
  const bool staged = dim <= 1024;
  if (staged)
    for (int d = threadIdx.x; d < dim; d += blockDim.x) cache_row[d] = src[d];
  __syncthreads();
  const float* cs = staged ? cache_row : src;
  for (int which = 0; which < 2; ++which) {
    float* base = which == 0 ? query + static_cast<long long>(t) * heads * dim : key + static_cast<long long>(t) * kv_heads * dim;
    const int n_heads = which == 0 ? heads : kv_heads;
    if (half_dim % 4 == 0) {
      const int quads = half_dim / 4;
      for (int k = threadIdx.x; k < n_heads * quads; k += blockDim.x) {
        const int head = k / quads, i = (k % quads) * 4;
        float* h = base + static_cast<long long>(head) * dim;
        const float4 a = *reinterpret_cast<const float4*>(h + i);
        const float4 b = *reinterpret_cast<const float4*>(h + half_dim + i);
        const float c0 = cs[i], c1 = cs[i + 1], c2 = cs[i + 2], c3 = cs[i + 3];
        const float s0 = cs[half_dim + i], s1 = cs[half_dim + i + 1], s2 = cs[half_dim + i + 2], s3 = cs[half_dim + i + 3];
        *reinterpret_cast<float4*>(h + i) = make_float4(a.x * c0 - b.x * s0, a.y * c1 - b.y * s1, a.z * c2 - b.z * s2, a.w * c3 - b.w * s3);
        *reinterpret_cast<float4*>(h + half_dim + i) =
            make_float4(b.x * c0 + a.x * s0, b.y * c1 + a.y * s1, b.z * c2 + a.z * s2, b.w * c3 + a.w * s3);
      }
    } else {
      for (int k = threadIdx.x; k < n_heads * half_dim; k += blockDim.x) {
        const int head = k / half_dim, i = k % half_dim;
        float* h = base + static_cast<long long>(head) * dim;
        const float a = h[i], b = h[half_dim + i];
        h[i] = a * cs[i] - b * cs[half_dim + i];
        h[half_dim + i] = b * cs[i] + a * cs[half_dim + i];
      }
    }
  }
}

// Does not compile: the shared score array is sized by a runtime value.
extern "C" __global__ void paged_attention_decode(const float* q, const float* k_cache, const float* v_cache,
                                                  const int* block_tables, const int* context_lens, float* out, int seqs,
                                                  int kv_heads, int group, int head_dim, float scale) {
  const int h = blockIdx.x, s = blockIdx.y;
  const int ctx = context_lens[s];
  __shared__ float weight[ctx];
  const int heads = kv_heads * group;
  const float* qv = q + (static_cast<long long>(s) * heads + h) * head_dim;
  for (int t = threadIdx.x; t < ctx; t += blockDim.x) {
    const long long row = ((static_cast<long long>(block_tables[s * 128 + t / 16]) * 16 + t % 16) * kv_heads + h / group) * head_dim;
    float dot = 0.0f;
    for (int d = 0; d < head_dim; ++d) dot += qv[d] * k_cache[row + d];
    weight[t] = dot * scale;
  }
  __syncthreads();
  if (threadIdx.x < head_dim) out[(static_cast<long long>(s) * heads + h) * head_dim + threadIdx.x] = weight[0];
}

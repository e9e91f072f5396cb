// Subtly wrong: equal logits are ordered by higher index first (a >= where the rule needs >), so rows whose top-k
// holds a tie return the wrong indices.
__device__ __forceinline__ bool ranks_before(float v, int i, float w, int j) { return v > w || (v == w && i > j); }

extern "C" __global__ void topk_vocab(const float* logits, float* values, int* indices, int rows, int vocab, int k) {
  __shared__ float best_v[256];
  __shared__ int best_i[256];
  __shared__ float prev_v;
  __shared__ int prev_i;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = logits + static_cast<long long>(row) * vocab;
  for (int j = 0; j < k; ++j) {
    float bv = 0.0f;
    int bi = -1;
    for (int c = threadIdx.x; c < vocab; c += blockDim.x) {
      const float v = p[c];
      if (j > 0 && !ranks_before(prev_v, prev_i, v, c)) continue;
      if (bi < 0 || ranks_before(v, c, bv, bi)) {
        bv = v;
        bi = c;
      }
    }
    best_v[threadIdx.x] = bv;
    best_i[threadIdx.x] = bi;
    __syncthreads();
    if (threadIdx.x == 0) {
      float v = 0.0f;
      int i = -1;
      for (int t = 0; t < blockDim.x; ++t)
        if (best_i[t] >= 0 && (i < 0 || ranks_before(best_v[t], best_i[t], v, i))) {
          v = best_v[t];
          i = best_i[t];
        }
      values[static_cast<long long>(row) * k + j] = v;
      indices[static_cast<long long>(row) * k + j] = i;
      prev_v = v;
      prev_i = i;
    }
    __syncthreads();
  }
}

// Reference: each thread keeps its first strict maximum; thread 0 combines the partials, lower index on ties.
extern "C" __global__ void argmax_vocab(const float* logits, int* out, int rows, int vocab) {
  __shared__ float best_v[256];
  __shared__ int best_i[256];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = logits + static_cast<long long>(row) * vocab;
  float bv = 0.0f;
  int bi = -1;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) {
    if (bi < 0 || p[c] > bv) {
      bv = p[c];
      bi = c;
    }
  }
  best_v[threadIdx.x] = bv;
  best_i[threadIdx.x] = bi;
  __syncthreads();
  if (threadIdx.x == 0) {
    float v = 0.0f;
    int i = -1;
    for (int t = 0; t < blockDim.x; ++t) {
      if (best_i[t] < 0) continue;
      if (i < 0 || best_v[t] > v || (best_v[t] == v && best_i[t] < i)) {
        v = best_v[t];
        i = best_i[t];
      }
    }
    out[row] = i;
  }
}

// Subtly wrong: treats the ids as 1-based (the row ids[t] - 1, clamped at 0).
extern "C" __global__ void embedding_gather(const int* ids, const float* table, float* out, int tokens, int dim) {
  const int t = blockIdx.x;
  if (t >= tokens) return;
  const int row = ids[t] > 0 ? ids[t] - 1 : 0;
  const float* src = table + static_cast<long long>(row) * dim;
  float* dst = out + static_cast<long long>(t) * dim;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) dst[c] = src[c];
}

// Does not compile: the source row is taken from the ids pointer (an int pointer where a float pointer is declared).
extern "C" __global__ void embedding_gather(const int* ids, const float* table, float* out, int tokens, int dim) {
  const int t = blockIdx.x;
  if (t >= tokens) return;
  const float* src = ids + static_cast<long long>(t) * dim;
  float* dst = out + static_cast<long long>(t) * dim;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) dst[c] = src[c];
}

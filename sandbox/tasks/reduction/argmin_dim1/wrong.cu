// Subtly wrong: stores the flat offset inside the batch slice instead of the index along dimension 1.
extern "C" __global__ void argmin_dim1(const float* x, int* out, int batch, int dim, int inner) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int b = blockIdx.y;
  if (i >= inner || b >= batch) return;
  const float* p = x + static_cast<long long>(b) * dim * inner + i;
  float best = p[0];
  int best_d = 0;
  for (int d = 1; d < dim; ++d) {
    const float v = p[static_cast<long long>(d) * inner];
    if (v < best) {
      best = v;
      best_d = d * inner + i;
    }
  }
  out[static_cast<long long>(b) * inner + i] = best_d;
}

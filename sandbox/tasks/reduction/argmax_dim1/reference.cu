// Reference: one thread per output (b, i) walks the reduced dimension in order and keeps the first
// index of the best value (a strict comparison, so ties keep the earlier index as torch does).
extern "C" __global__ void argmax_dim1(const float* x, int* out, int batch, int dim, int inner) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int b = blockIdx.y;
  if (i >= inner || b >= batch) return;
  const float* p = x + static_cast<long long>(b) * dim * inner + i;
  float best = p[0];
  int best_d = 0;
  for (int d = 1; d < dim; ++d) {
    const float v = p[static_cast<long long>(d) * inner];
    if (v > best) {
      best = v;
      best_d = d;
    }
  }
  out[static_cast<long long>(b) * inner + i] = best_d;
}

// Subtly wrong: the sum skips the max subtraction that the numerators use, so it is off by exp(max) (and overflows).
extern "C" __global__ void softmax_dim1(const float* x, float* out, int batch, int dim, int inner) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int b = blockIdx.y;
  if (i >= inner || b >= batch) return;
  const long long start = static_cast<long long>(b) * dim * inner + i;
  float m = x[start];
  for (int d = 1; d < dim; ++d) m = fmaxf(m, x[start + static_cast<long long>(d) * inner]);
  float s = 0.0f;
  for (int d = 0; d < dim; ++d) s += expf(x[start + static_cast<long long>(d) * inner]);
  for (int d = 0; d < dim; ++d) {
    const long long at = start + static_cast<long long>(d) * inner;
    out[at] = expf(x[at] - m) / s;
  }
}

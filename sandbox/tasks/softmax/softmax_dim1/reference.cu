// Reference: one thread per column (b, i) makes three passes down dimension 1, whose elements are
// inner apart: the maximum, the sum of exp(x - max), then the normalised outputs. Neighbouring threads
// take neighbouring i, so every step is coalesced.
extern "C" __global__ void softmax_dim1(const float* x, float* out, int batch, int dim, int inner) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int b = blockIdx.y;
  if (i >= inner || b >= batch) return;
  const long long start = static_cast<long long>(b) * dim * inner + i;
  float m = x[start];
  for (int d = 1; d < dim; ++d) m = fmaxf(m, x[start + static_cast<long long>(d) * inner]);
  float s = 0.0f;
  for (int d = 0; d < dim; ++d) s += expf(x[start + static_cast<long long>(d) * inner] - m);
  for (int d = 0; d < dim; ++d) {
    const long long at = start + static_cast<long long>(d) * inner;
    out[at] = expf(x[at] - m) / s;
  }
}

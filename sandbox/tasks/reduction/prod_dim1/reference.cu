// Reference: one thread per output (b, i) walks the reduced dimension in order; neighbouring threads
// read neighbouring i, so every step is a coalesced row of the tensor.
extern "C" __global__ void prod_dim1(const float* x, float* out, int batch, int dim, int inner) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int b = blockIdx.y;
  if (i >= inner || b >= batch) return;
  const float* p = x + static_cast<long long>(b) * dim * inner + i;
  float acc = 1.0f;
  for (int d = 0; d < dim; ++d) {
    const float v = p[static_cast<long long>(d) * inner];
    acc *= v;
  }
  out[static_cast<long long>(b) * inner + i] = acc;
}

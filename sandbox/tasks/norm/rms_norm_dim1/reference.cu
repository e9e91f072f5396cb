// Reference: one thread per (image, spatial position) walks the features, which are hw floats apart;
// neighbouring threads take neighbouring positions, so every step is coalesced.
extern "C" __global__ void rms_norm_dim1(const float* x, float* out, int batch, int features, int hw, float eps) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int n = blockIdx.y;
  if (j >= hw || n >= batch) return;
  const long long start = static_cast<long long>(n) * features * hw + j;
  float s = 0.0f;
  for (int c = 0; c < features; ++c) {
    const float v = x[start + static_cast<long long>(c) * hw];
    s += v * v;
  }
  const float inv = 1.0f / sqrtf(s / features + eps);
  for (int c = 0; c < features; ++c) out[start + static_cast<long long>(c) * hw] = x[start + static_cast<long long>(c) * hw] * inv;
}

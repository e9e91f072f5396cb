// Subtly wrong: stores the running sum before adding the element (an exclusive scan).
extern "C" __global__ void cumsum_dim1(const float* x, float* out, int batch, int len, int inner) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int b = blockIdx.y;
  if (i >= inner || b >= batch) return;
  const long long start = static_cast<long long>(b) * len * inner + i;
  float s = 0.0f;
  for (int d = 0; d < len; ++d) {
    out[start + static_cast<long long>(d) * inner] = s;
    s += x[start + static_cast<long long>(d) * inner];
  }
}

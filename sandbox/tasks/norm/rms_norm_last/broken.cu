// Does not compile: the reduction helper is called before it is declared.
extern "C" __global__ void rms_norm_last(const float* x, const float* weight, float* out, int rows, int cols,
                                         float eps) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  float* q = out + static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += p[c] * p[c];
  s = block_sum(s);
  const float inv = rsqrtf(s / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = p[c] * inv * weight[c];
}

// Subtly wrong: the suffix sums are computed but written in forward order (q[base + t] instead of q[c]).
extern "C" __global__ void reverse_cumsum(const float* x, float* out, int rows, int cols) {
  __shared__ float buf[2][256];
  __shared__ float carry;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long offset = static_cast<long long>(row) * cols;
  const float* p = x + offset;
  float* q = out + offset;
  const int t = threadIdx.x;
  if (t == 0) carry = 0.0f;
  __syncthreads();
  for (int base = 0; base < cols; base += 256) {
    const int c = cols - 1 - (base + t);
    int src = 0;
    buf[src][t] = c >= 0 ? p[c] : 0.0f;
    __syncthreads();
    for (int step = 1; step < 256; step *= 2) {
      buf[1 - src][t] = t >= step ? buf[src][t] + buf[src][t - step] : buf[src][t];
      src = 1 - src;
      __syncthreads();
    }
    const float v = buf[src][t] + carry;
    if (base + t < cols) q[base + t] = v;
    __syncthreads();
    if (t == 255) carry = v;
    __syncthreads();
  }
}

// Reference: 256-element chunks, each scanned Hillis-Steele style with a double buffer and a barrier
// per step; a running carry joins the chunks.
extern "C" __global__ void row_scan(const int* x, int* out, int rows, int cols) {
  __shared__ int buf[2][256];
  __shared__ int carry;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const int* p = x + static_cast<long long>(row) * cols;
  int* q = out + static_cast<long long>(row) * cols;
  const int t = threadIdx.x;
  if (t == 0) carry = 0;
  __syncthreads();
  for (int base = 0; base < cols; base += 256) {
    const int c = base + t;
    int src = 0;
    buf[src][t] = c < cols ? p[c] : 0;
    __syncthreads();
    for (int offset = 1; offset < 256; offset *= 2) {
      buf[1 - src][t] = buf[src][t] + (t >= offset ? buf[src][t - offset] : 0);
      src = 1 - src;
      __syncthreads();
    }
    const int v = buf[src][t] + carry;
    if (c < cols) q[c] = v;
    __syncthreads();
    if (t == 255) carry = v;
    __syncthreads();
  }
}

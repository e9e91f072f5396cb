// Does not compile: the shuffle width is an undeclared name.
extern "C" __global__ void row_scan(const int* x, int* out, int rows, int cols) {
  __shared__ int warp_total[8];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const int* p = x + static_cast<long long>(row) * cols;
  int* q = out + static_cast<long long>(row) * cols;
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  int carry = 0;
  for (int base = 0; base < cols; base += 256) {
    const int c = base + t;
    int v = c < cols ? p[c] : 0;
#pragma unroll
    for (int o = 1; o < 32; o *= 2) {
      const int n = __shfl_up_sync(0xffffffffu, v, o, warp_width);
      if (lane >= o) v += n;
    }
    if (lane == 31) warp_total[warp] = v;
    __syncthreads();
    int before = 0, chunk = 0;
#pragma unroll
    for (int w = 0; w < 8; ++w) {
      const int s = warp_total[w];
      before += w < warp ? s : 0;
      chunk += s;
    }
    if (c < cols) q[c] = carry + before + v;
    carry += chunk;
    __syncthreads();  // warp_total is rewritten by the next chunk
  }
}

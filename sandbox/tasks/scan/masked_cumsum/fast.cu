// Faster: the masked input (x where mask is 1, else 0) is scanned.
// Warp-shuffle scans (5 steps, no barriers) over 256-element chunks, then one barrier-separated pass
// over the 8 warp totals; the running carry lives in registers.
extern "C" __global__ void masked_cumsum(const float* x, const int* mask, float* out, int rows, int cols) {
  __shared__ float warp_total[8];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long offset = static_cast<long long>(row) * cols;
  const float* p = x + offset;
  float* q = out + offset;
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  float carry = 0.0f;
  for (int base = 0; base < cols; base += 256) {
    const int c = base + t;
    float v = c < cols && mask[offset + c] != 0 ? p[c] : 0.0f;
#pragma unroll
    for (int o = 1; o < 32; o *= 2) {
      const float n = __shfl_up_sync(0xffffffffu, v, o);
      if (lane >= o) v = v + n;
    }
    if (lane == 31) warp_total[warp] = v;
    __syncthreads();
    float before = 0.0f, chunk = 0.0f;
#pragma unroll
    for (int w = 0; w < 8; ++w) {
      const float s = warp_total[w];
      if (w < warp) before = before + s;
      chunk = chunk + s;
    }
    if (base + t < cols) q[c] = carry + (before + v);
    carry = carry + chunk;
    __syncthreads();  // warp_total is rewritten by the next chunk
  }
}

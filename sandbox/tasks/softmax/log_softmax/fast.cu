// Faster: one read pass instead of two for the statistics: each thread keeps a running maximum and a
// sum of exp(x - running max) rescaled when the maximum grows (the online softmax), warps merge their
// pairs with shuffles, and 512 threads per row keep more loads in flight.
// leap-launch: log_softmax grid=rows block=512
__device__ __forceinline__ void merge(float& m, float& s, float om, float os) {
  const float nm = fmaxf(m, om);
  s = (m == nm ? s : s * expf(m - nm)) + (om == nm ? os : os * expf(om - nm));
  m = nm;
}

extern "C" __global__ void log_softmax(const float* x, float* out, int rows, int cols) {
  __shared__ float warp_max[32], warp_sum[32];
  __shared__ float row_max, log_sum;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  float* q = out + static_cast<long long>(row) * cols;
  float m = -__int_as_float(0x7f800000), s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = p[c];
    if (v > m) {
      s = s * expf(m - v) + 1.0f;
      m = v;
    } else {
      s += expf(v - m);
    }
  }
  for (int o = 16; o > 0; o /= 2) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  if (lane == 0) {
    warp_max[warp] = m;
    warp_sum[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    m = lane < warps ? warp_max[lane] : -__int_as_float(0x7f800000);
    s = lane < warps ? warp_sum[lane] : 0.0f;
    for (int o = 16; o > 0; o /= 2) merge(m, s, __shfl_xor_sync(0xffffffffu, m, o), __shfl_xor_sync(0xffffffffu, s, o));
    if (lane == 0) {
      row_max = m;
      log_sum = logf(s);
    }
  }
  __syncthreads();
  const float shift = row_max + log_sum;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = p[c] - shift;
}

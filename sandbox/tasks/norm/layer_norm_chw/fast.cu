// Faster: a sample is far too long for one block, so two kernels spread it over 64 blocks each. The
// first writes every chunk's sum and sum of squares (around the sample's first value, which keeps
// the subtraction well conditioned) to scratch; the second adds a sample's 64 pairs in a fixed order
// in every block and normalises its own chunk.
// leap-scratch: partials float32 batch * 64 * 2
// leap-launch: chunk_moments grid=(64, batch) block=256 args=(x, partials, batch, size)
// leap-launch: normalize_chunks grid=(64, batch) block=256 args=(x, weight, bias, partials, out, batch, size, eps)

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Two sums at once over the block: warp shuffles, then one warp over the per-warp partials.
__device__ float2 block_sum2(float a, float b) {
  __shared__ float2 part[32];
  __shared__ float2 total;
  a = warp_sum(a);
  b = warp_sum(b);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = (blockDim.x + 31) / 32;
  if (lane == 0) part[warp] = make_float2(a, b);
  __syncthreads();
  if (warp == 0) {
    float2 v = lane < warps ? part[lane] : make_float2(0.0f, 0.0f);
    v.x = warp_sum(v.x);
    v.y = warp_sum(v.y);
    if (lane == 0) total = v;
  }
  __syncthreads();
  return total;
}

extern "C" __global__ void chunk_moments(const float* x, float* partials, int batch, int size) {
  const int n = blockIdx.y, chunk = blockIdx.x;
  if (n >= batch) return;
  const float* p = x + static_cast<long long>(n) * size;
  const int per = (size + 63) / 64;
  const int lo = chunk * per < size ? chunk * per : size;
  const int hi = lo + per < size ? lo + per : size;
  const float shift = p[0];
  float s = 0.0f, s2 = 0.0f;
  for (int k = lo + threadIdx.x; k < hi; k += blockDim.x) {
    const float d = p[k] - shift;
    s += d;
    s2 += d * d;
  }
  const float2 t = block_sum2(s, s2);
  if (threadIdx.x == 0) {
    partials[(static_cast<long long>(n) * 64 + chunk) * 2] = t.x;
    partials[(static_cast<long long>(n) * 64 + chunk) * 2 + 1] = t.y;
  }
}

extern "C" __global__ void normalize_chunks(const float* x, const float* weight, const float* bias, const float* partials,
                                            float* out, int batch, int size, float eps) {
  const int n = blockIdx.y, chunk = blockIdx.x;
  if (n >= batch) return;
  const float* p = x + static_cast<long long>(n) * size;
  float* q = out + static_cast<long long>(n) * size;
  float s = 0.0f, s2 = 0.0f;
  for (int k = 0; k < 64; ++k) {
    s += partials[(static_cast<long long>(n) * 64 + k) * 2];
    s2 += partials[(static_cast<long long>(n) * 64 + k) * 2 + 1];
  }
  const float dm = s / size;
  const float inv = rsqrtf(fmaxf(s2 / size - dm * dm, 0.0f) + eps);
  const float mean = p[0] + dm;
  const int per = (size + 63) / 64;
  const int lo = chunk * per < size ? chunk * per : size;
  const int hi = lo + per < size ? lo + per : size;
  for (int k = lo + threadIdx.x; k < hi; k += blockDim.x) q[k] = (p[k] - mean) * inv * weight[k] + bias[k];
}

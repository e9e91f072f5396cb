// Faster: 1024 threads per channel walk each image's contiguous plane (no division per element),
// one pass gathers the sum and the sum of squares around the plane's first value (a shift that
// keeps the subtraction well conditioned), warp shuffles reduce them, and a second pass writes.
// leap-launch: batch_norm grid=channels block=1024

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

extern "C" __global__ void batch_norm(const float* x, const float* weight, const float* bias, float* out, int batch,
                                      int channels, int hw, float eps) {
  const int c = blockIdx.x;
  if (c >= channels) return;
  const float shift = x[static_cast<long long>(c) * hw];
  float s = 0.0f, s2 = 0.0f;
  for (int n = 0; n < batch; ++n) {
    const float* p = x + (static_cast<long long>(n) * channels + c) * hw;
    for (int j = threadIdx.x; j < hw; j += blockDim.x) {
      const float d = p[j] - shift;
      s += d;
      s2 += d * d;
    }
  }
  const float2 t = block_sum2(s, s2);
  const float count = static_cast<float>(batch) * static_cast<float>(hw);
  const float dm = t.x / count;
  const float var = fmaxf(t.y / count - dm * dm, 0.0f);
  const float mean = shift + dm;
  const float scale = weight[c] * rsqrtf(var + eps);
  const float offset = bias[c] - mean * scale;
  for (int n = 0; n < batch; ++n) {
    const long long base = (static_cast<long long>(n) * channels + c) * hw;
    for (int j = threadIdx.x; j < hw; j += blockDim.x) out[base + j] = x[base + j] * scale + offset;
  }
}

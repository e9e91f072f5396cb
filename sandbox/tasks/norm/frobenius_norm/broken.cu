// Does not compile: block_sum takes one argument, not two.
// leap-scratch: partials float32 1024
// leap-launch: partial_squares grid=min(ceil_div(batch * features * height * width, 4096), 1024) block=256 args=(x, partials, n)
// leap-launch: scale_by_norm grid=ceil_div(batch * features * height * width, 1024) block=256 args=(x, partials, out, n)
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ float block_sum(float v) {
  __shared__ float part[32];
  __shared__ float total;
  v = warp_sum(v);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = (blockDim.x + 31) / 32;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_sum(lane < warps ? part[lane] : 0.0f);
    if (lane == 0) total = v;
  }
  __syncthreads();
  return total;
}

extern "C" __global__ void partial_squares(const float* x, float* partials, int n) {
  float s = 0.0f;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    s += x[i] * x[i];
  s = block_sum(s);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

extern "C" __global__ void scale_by_norm(const float* x, const float* partials, float* out, int n) {
  const int blocks = (n + 4095) / 4096 < 1024 ? (n + 4095) / 4096 : 1024;
  float s = 0.0f;
  for (int k = threadIdx.x; k < blocks; k += blockDim.x) s += partials[k];
  const float inv = rsqrtf(block_sum(s, blocks));
  const long long base = static_cast<long long>(blockIdx.x) * 1024;
  for (int k = threadIdx.x; k < 1024; k += blockDim.x) {
    const long long i = base + k;
    if (i < n) out[i] = x[i] * inv;
  }
}

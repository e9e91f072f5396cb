// Does not compile: vec is declared twice.
// leap-launch: l2_norm grid=rows block=512
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

extern "C" __global__ void l2_norm(const float* x, float* out, int rows, int cols) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  float* q = out + static_cast<long long>(row) * cols;
  const bool vec = (cols & 3) == 0;
  const float vec = 0.0f;
  float s = 0.0f;
  if (vec) {
    for (int c = threadIdx.x; c < cols / 4; c += blockDim.x) {
      const float4 v = reinterpret_cast<const float4*>(p)[c];
      s += (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w);
    }
  } else {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += p[c] * p[c];
  }
  const float inv = 1.0f / sqrtf(block_sum(s));
  if (vec) {
    for (int c = threadIdx.x; c < cols / 4; c += blockDim.x) {
      const float4 v = reinterpret_cast<const float4*>(p)[c];
      reinterpret_cast<float4*>(q)[c] = make_float4(v.x * inv, v.y * inv, v.z * inv, v.w * inv);
    }
  } else {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = p[c] * inv;
  }
}

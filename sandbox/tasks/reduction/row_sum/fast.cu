// Faster: 16-byte loads when rows are 16-byte aligned, warp shuffles instead of a barrier per level.
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

extern "C" __global__ void row_sum(const float* x, float* out, int rows, int cols) {
  __shared__ float warp_partial[32];
  const int row = blockIdx.x;
  const float* p = x + static_cast<long long>(row) * cols;
  float s = 0.0f;
  if ((cols & 3) == 0) {
    const float4* p4 = reinterpret_cast<const float4*>(p);
    for (int c = threadIdx.x; c < cols / 4; c += blockDim.x) {
      const float4 v = p4[c];
      s += (v.x + v.y) + (v.z + v.w);
    }
  } else {
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += p[c];
  }
  s = warp_sum(s);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_partial[warp] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < blockDim.x / 32 ? warp_partial[lane] : 0.0f;
    s = warp_sum(s);
    if (lane == 0 && row < rows) out[row] = s;
  }
}

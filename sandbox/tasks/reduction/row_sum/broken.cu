// Does not compile: warp_id is never declared.
__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

extern "C" __global__ void row_sum(const float* x, float* out, int rows, int cols) {
  __shared__ float warp_partial[32];
  const int row = blockIdx.x;
  const float* p = x + static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += p[c];
  s = warp_sum(s);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_partial[warp_id] = s;
  __syncthreads();
  if (warp == 0) {
    s = lane < blockDim.x / 32 ? warp_partial[lane] : 0.0f;
    s = warp_sum(s);
    if (lane == 0 && row < rows) out[row] = s;
  }
}

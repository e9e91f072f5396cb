// Subtly wrong: the mean of squares divides by cols - 1 (a sample-variance habit), not by cols.
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

extern "C" __global__ void rms_norm_last(const float* x, const float* weight, float* out, int rows, int cols,
                                         float eps) {
  __shared__ float scratch[32];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  float* q = out + static_cast<long long>(row) * cols;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += p[c] * p[c];
  s = warp_sum(s);
  if (lane == 0) scratch[warp] = s;
  __syncthreads();
  s = warp_sum(lane < warps ? scratch[lane] : 0.0f);
  const float inv = rsqrtf(s / max(cols - 1, 1) + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = p[c] * inv * weight[c];
}

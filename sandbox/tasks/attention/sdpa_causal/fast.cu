#include <math_constants.h>
// Faster: a warp per key with the lanes splitting the head dimension (coalesced reads of K, a shuffle
// reduction), warp-shuffle max and sum, and only the keys a row can see are visited.
extern "C" __global__ void sdpa_causal(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V, float* __restrict__ O, int B, int H, int S, int D) {
  extern __shared__ float smem[];
  float* scores = smem;
  float* red = smem + S;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  const long long row = blockIdx.x;
  const long long head = row / S;
  const int i = static_cast<int>(row % S);
  const int visible = i + 1;
  const float* q = Q + row * D;
  const float* k = K + head * S * D;
  const float* v = V + head * S * D;
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  for (int j = warp; j < visible; j += warps) {
    const float* kj = k + static_cast<long long>(j) * D;
    float dot = 0.0f;
    for (int d = lane; d < D; d += 32) dot += q[d] * kj[d];
    for (int off = 16; off > 0; off /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, off);
    if (lane == 0) scores[j] = dot * scale;
  }
  __syncthreads();
  float m = -CUDART_INF_F;
  for (int j = threadIdx.x; j < visible; j += blockDim.x) m = fmaxf(m, scores[j]);
  for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  if (lane == 0) red[warp] = m;
  __syncthreads();
  m = red[0];
  for (int w = 1; w < warps; ++w) m = fmaxf(m, red[w]);
  __syncthreads();
  float sum = 0.0f;
  for (int j = threadIdx.x; j < visible; j += blockDim.x) {
    const float e = __expf(scores[j] - m);
    scores[j] = e;
    sum += e;
  }
  for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (lane == 0) red[warp] = sum;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < warps; ++w) total += red[w];
  const float inv = 1.0f / total;
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float a0 = 0.0f, a1 = 0.0f;
    int j = 0;
    for (; j + 2 <= visible; j += 2) {
      a0 += scores[j] * v[static_cast<long long>(j) * D + d];
      a1 += scores[j + 1] * v[static_cast<long long>(j + 1) * D + d];
    }
    if (j < visible) a0 += scores[j] * v[static_cast<long long>(j) * D + d];
    O[row * D + d] = (a0 + a1) * inv;
  }
}

// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: layernorm
#include <cmath>

extern "C" __global__ void layernorm(const float* x, const float* gamma, const float* beta, float* y, int cols, float eps) {
  extern __shared__ float red[];
  const float* in = x + static_cast<size_t>(blockIdx.x) * cols;
  float s = 0.f, ss = 0.f, mx = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    s += in[c];
    ss += in[c] * in[c];
    mx = std::fmax(mx, in[c]);
  }
  red[threadIdx.x] = s;
  red[blockDim.x + threadIdx.x] = ss;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) {
      red[threadIdx.x] += red[threadIdx.x + k];
      red[blockDim.x + threadIdx.x] += red[blockDim.x + threadIdx.x + k];
    }
    __syncthreads();
  }
  const float mean = red[0] / cols;
  const float var = red[blockDim.x] / cols - mean * mean;
  const float inv = rsqrtf(var + eps);
  if (std::isinf(mx)) return;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    y[static_cast<size_t>(blockIdx.x) * cols + c] = (in[c] - mean) * inv * gamma[c] + beta[c];
  }
}

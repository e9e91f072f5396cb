// Faster: each block stages its 256 + 4 input samples of a channel and the channel's 5 weights in
// shared memory, so every input is read from global memory once per block instead of five times.
#define KS 5
#define PAD 2
#define BLOCK 256
extern "C" __global__ void conv1d(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias, float* __restrict__ y, int N, int C, int L, int F) {
  __shared__ float xs[BLOCK + KS - 1];
  __shared__ float ws[KS];
  const int p0 = blockIdx.x * BLOCK;
  const int p = p0 + threadIdx.x;
  const int f = blockIdx.y, n = blockIdx.z;
  float acc = bias[f];
  for (int c = 0; c < C; ++c) {
    const float* xc = x + (static_cast<long long>(n) * C + c) * L;
    __syncthreads();
    for (int t = threadIdx.x; t < BLOCK + KS - 1; t += BLOCK) {
      const int i = p0 - PAD + t;
      xs[t] = (i >= 0 && i < L) ? xc[i] : 0.0f;
    }
    if (threadIdx.x < KS) ws[threadIdx.x] = w[(static_cast<long long>(f) * C + c) * KS + threadIdx.x];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < KS; ++k) acc += xs[threadIdx.x + k] * ws[k];
  }
  if (p < L) y[(static_cast<long long>(n) * F + f) * L + p] = acc;
}

#include <math_constants.h>
// Reference: the row maximum, then the sum of exp(x - max), each combined serially by thread 0; then
// out = x - max - log(sum).
extern "C" __global__ void log_softmax_vocab(const float* logits, float* out, int rows, int vocab) {
  __shared__ float partial[256];
  __shared__ float row_max, log_sum;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = logits + static_cast<long long>(row) * vocab;
  float* q = out + static_cast<long long>(row) * vocab;
  float m = -CUDART_INF_F;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) m = fmaxf(m, p[c]);
  partial[threadIdx.x] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    float v = -CUDART_INF_F;
    for (int t = 0; t < blockDim.x; ++t) v = fmaxf(v, partial[t]);
    row_max = v;
  }
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) s += expf(p[c] - row_max);
  partial[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float v = 0.0f;
    for (int t = 0; t < blockDim.x; ++t) v += partial[t];
    log_sum = logf(v);
  }
  __syncthreads();
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) q[c] = p[c] - row_max - log_sum;
}

#include <math_constants.h>
// Subtly wrong: the logits are multiplied by the temperature instead of divided by it.
extern "C" __global__ void temperature_softmax(const float* logits, float* out, int rows, int vocab, float temperature) {
  __shared__ float partial[256];
  __shared__ float row_max, row_sum;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = logits + static_cast<long long>(row) * vocab;
  float* q = out + static_cast<long long>(row) * vocab;
  float m = -CUDART_INF_F;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) m = fmaxf(m, p[c] * temperature);
  partial[threadIdx.x] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    float v = -CUDART_INF_F;
    for (int t = 0; t < blockDim.x; ++t) v = fmaxf(v, partial[t]);
    row_max = v;
  }
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) s += expf(p[c] * temperature - row_max);
  partial[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float v = 0.0f;
    for (int t = 0; t < blockDim.x; ++t) v += partial[t];
    row_sum = v;
  }
  __syncthreads();
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) q[c] = expf(p[c] * temperature - row_max) / row_sum;
}

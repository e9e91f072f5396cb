#include <math_constants.h>
// Does not compile: the row maximum is declared inside the if block and read outside it.
extern "C" __global__ void temperature_softmax(const float* logits, float* out, int rows, int vocab, float temperature) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = logits + static_cast<long long>(row) * vocab;
  float* q = out + static_cast<long long>(row) * vocab;
  float m = -CUDART_INF_F;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) m = fmaxf(m, p[c] / temperature);
  partial[threadIdx.x] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    float row_max = -CUDART_INF_F;
    for (int t = 0; t < blockDim.x; ++t) row_max = fmaxf(row_max, partial[t]);
  }
  float s = 0.0f;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) s += expf(p[c] / temperature - row_max);
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) q[c] = expf(p[c] / temperature - row_max) / s;
}

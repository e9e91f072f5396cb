#include <math_constants.h>
// Does not compile: the shared partials are declared without a size.
extern "C" __global__ void log_softmax_vocab(const float* logits, float* out, int rows, int vocab) {
  __shared__ float partial[];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = logits + static_cast<long long>(row) * vocab;
  float* q = out + static_cast<long long>(row) * vocab;
  float m = -CUDART_INF_F;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) m = fmaxf(m, p[c]);
  partial[threadIdx.x] = m;
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) s += expf(p[c] - partial[0]);
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) q[c] = p[c] - partial[0] - logf(s);
}

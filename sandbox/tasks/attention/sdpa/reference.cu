#include <math_constants.h>
// Reference: one block per query row. Scores go to dynamic shared memory (S floats), then a
// shared-memory tree finds their maximum and the sum of exponentials, then each thread forms
// output dimensions d = t, t + 128, ... as the probability-weighted sum of V's rows.
extern "C" __global__ void sdpa(const float* Q, const float* K, const float* V, float* O, int B, int H, int S, int D) {
  extern __shared__ float smem[];
  float* scores = smem;     // S entries
  float* red = smem + S;    // blockDim.x entries
  const long long row = blockIdx.x;  // (b * H + h) * S + i
  const long long head = row / S;
  const float* q = Q + row * D;
  const float* k = K + head * S * D;
  const float* v = V + head * S * D;
  const float scale = 1.0f / sqrtf(static_cast<float>(D));
  for (int j = threadIdx.x; j < S; j += blockDim.x) {
    float dot = 0.0f;
    for (int d = 0; d < D; ++d) dot += q[d] * k[static_cast<long long>(j) * D + d];
    scores[j] = dot * scale;
  }
  __syncthreads();
  float m = -CUDART_INF_F;
  for (int j = threadIdx.x; j < S; j += blockDim.x) m = fmaxf(m, scores[j]);
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  float sum = 0.0f;
  for (int j = threadIdx.x; j < S; j += blockDim.x) {
    const float e = expf(scores[j] - m);
    scores[j] = e;
    sum += e;
  }
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  const float total = red[0];
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float acc = 0.0f;
    for (int j = 0; j < S; ++j) acc += scores[j] * v[static_cast<long long>(j) * D + d];
    O[row * D + d] = acc / total;
  }
}

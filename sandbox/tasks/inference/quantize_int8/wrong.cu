#include <math_constants.h>
// Subtly wrong: the scale comes from the row's maximum, not its absolute maximum, so rows whose largest magnitude
// is negative are scaled too finely and clamp.
extern "C" __global__ void quantize_int8(const float* x, signed char* q, float* scale, int rows, int cols) {
  __shared__ float partial[256];
  __shared__ float row_scale;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  signed char* o = q + static_cast<long long>(row) * cols;
  float m = -CUDART_INF_F;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, p[c]);
  partial[threadIdx.x] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    float v = -CUDART_INF_F;
    for (int t = 0; t < blockDim.x; ++t) v = fmaxf(v, partial[t]);
    row_scale = v / 127.0f;
    scale[row] = row_scale;
  }
  __syncthreads();
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float r = row_scale > 0.0f ? rintf(p[c] / row_scale) : 0.0f;
    o[c] = static_cast<signed char>(fminf(fmaxf(r, -127.0f), 127.0f));
  }
}

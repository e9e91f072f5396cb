// Reference: the row's absolute maximum combined serially by thread 0, then one division and rounding per element.
extern "C" __global__ void quantize_int8(const float* x, signed char* q, float* scale, int rows, int cols) {
  __shared__ float partial[256];
  __shared__ float row_scale;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  signed char* o = q + static_cast<long long>(row) * cols;
  float m = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, fabsf(p[c]));
  partial[threadIdx.x] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    float v = 0.0f;
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

// Reference: three passes over the row; thread 0 combines the per-thread partials serially.
extern "C" __global__ void softmax(const float* x, float* out, int rows, int cols) {
  __shared__ float partial[256];
  __shared__ float row_max, row_sum;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  float* q = out + static_cast<long long>(row) * cols;
  float m = __int_as_float(0xff800000);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, p[c]);
  partial[threadIdx.x] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    float v = __int_as_float(0xff800000);
    for (int t = 0; t < blockDim.x; ++t) v = fmaxf(v, partial[t]);
    row_max = v;
  }
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(p[c] - row_max);
  partial[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float v = 0.0f;
    for (int t = 0; t < blockDim.x; ++t) v += partial[t];
    row_sum = v;
  }
  __syncthreads();
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = expf(p[c] - row_max) / row_sum;
}

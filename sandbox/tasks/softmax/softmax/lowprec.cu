// Low precision: the row sum of the exponentials accumulates in half; everything else as the reference.
#include <cuda_fp16.h>

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
  __half s = __float2half(0.0f);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s = __hadd(s, __float2half(expf(p[c] - row_max)));
  partial[threadIdx.x] = __half2float(s);
  __syncthreads();
  if (threadIdx.x == 0) {
    __half v = __float2half(0.0f);
    for (int t = 0; t < blockDim.x; ++t) v = __hadd(v, __float2half(partial[t]));
    row_sum = __half2float(v);
  }
  __syncthreads();
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = expf(p[c] - row_max) / row_sum;
}

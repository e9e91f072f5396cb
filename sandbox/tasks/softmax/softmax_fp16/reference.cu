// Reference: one block of 256 threads per row; half values widened to float, the row maximum and the
// sum of exp(x - max) through shared-memory trees, each output rounded to half.
#include <cuda_fp16.h>

__device__ float block_reduce(float v, float* partial, bool take_max) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      const float other = partial[threadIdx.x + stride];
      partial[threadIdx.x] = take_max ? fmaxf(partial[threadIdx.x], other) : partial[threadIdx.x] + other;
    }
    __syncthreads();
  }
  const float total = partial[0];
  __syncthreads();
  return total;
}

extern "C" __global__ void softmax_fp16(const __half* x, __half* out, int rows, int cols) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  if (row >= rows) return;
  const __half* p = x + static_cast<long long>(row) * cols;
  __half* q = out + static_cast<long long>(row) * cols;
  float m = -__int_as_float(0x7f800000);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, __half2float(p[c]));
  const float row_max = block_reduce(m, partial, true);
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(__half2float(p[c]) - row_max);
  const float sum = block_reduce(s, partial, false);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = __float2half(expf(__half2float(p[c]) - row_max) / sum);
}

// Low precision: the partial sums and the tree accumulate in half; everything else as the reference.
#include <cuda_fp16.h>

extern "C" __global__ void row_sum(const float* x, float* out, int rows, int cols) {
  __shared__ __half partial[256];
  const int row = blockIdx.x;
  const float* p = x + static_cast<long long>(row) * cols;
  __half s = __float2half(0.0f);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s = __hadd(s, __float2half(p[c]));
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] = __hadd(partial[threadIdx.x], partial[threadIdx.x + stride]);
    __syncthreads();
  }
  if (threadIdx.x == 0 && row < rows) out[row] = __half2float(partial[0]);
}

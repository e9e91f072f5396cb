// Subtly wrong: the strided loop stops at cols - 1, so each row's last element is dropped.
#include <cuda_fp16.h>

extern "C" __global__ void sum_fp16(const __half* x, __half* out, int rows, int cols) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  const __half* p = x + static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols - 1; c += blockDim.x) s += __half2float(p[c]);
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0 && row < rows) out[row] = __float2half(partial[0]);
}

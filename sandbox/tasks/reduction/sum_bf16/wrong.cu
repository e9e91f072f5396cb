// Subtly wrong: the tree stops one level early (stride > 1), so partial[1] is never added.
#include <cuda_bf16.h>

extern "C" __global__ void sum_bf16(const __nv_bfloat16* x, __nv_bfloat16* out, int rows, int cols) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  const __nv_bfloat16* p = x + static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __bfloat162float(p[c]);
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 1; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0 && row < rows) out[row] = __float2bfloat16(partial[0]);
}

// Low precision: each thread's running sum is kept in half, rounded after every product; everything else is right.
#include <cuda_fp16.h>
extern "C" __global__ void matvec(const float* A, const float* x, float* y, int M, int K) {
  __shared__ float partial[256];
  const int row = blockIdx.x;
  const float* a = A + static_cast<long long>(row) * K;
  __half acc = __float2half(0.0f);
  for (int k = threadIdx.x; k < K; k += blockDim.x) acc = __float2half(__half2float(acc) + a[k] * x[k]);
  partial[threadIdx.x] = __half2float(acc);
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[row] = partial[0];
}

// Does not compile: the half-precision output is assigned a float pointer instead of a value.
#include <cuda_fp16.h>

extern "C" __global__ void rms_norm_last_fp16(const __half* x, const __half* weight, __half* out, int rows,
                                              int cols, float eps) {
  __shared__ float total;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const __half* p = x + static_cast<long long>(row) * cols;
  __half* q = out + static_cast<long long>(row) * cols;
  if (threadIdx.x == 0) total = 0.0f;
  __syncthreads();
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += __half2float(p[c]) * __half2float(p[c]);
  atomicAdd(&total, s);
  __syncthreads();
  const float inv = rsqrtf(total / cols + eps);
  for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = &inv;
}

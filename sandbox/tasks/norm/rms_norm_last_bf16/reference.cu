// Reference: one warp per row; lane partials of the sum of squares in float, combined serially by lane 0.
#include <cuda_bf16.h>

extern "C" __global__ void rms_norm_last_bf16(const __nv_bfloat16* x, const __nv_bfloat16* weight,
                                              __nv_bfloat16* out, int rows, int cols, float eps) {
  __shared__ float partial[32];
  __shared__ float inv;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const __nv_bfloat16* p = x + static_cast<long long>(row) * cols;
  __nv_bfloat16* q = out + static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = __bfloat162float(p[c]);
    s += v * v;
  }
  partial[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int t = 0; t < blockDim.x; ++t) total += partial[t];
    inv = 1.0f / sqrtf(total / cols + eps);
  }
  __syncthreads();
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    q[c] = __float2bfloat16(__bfloat162float(p[c]) * inv * __bfloat162float(weight[c]));
}

// Reference: one warp per row; the rounded residual is stored and its squares summed per lane in float,
// lane 0 combines the partials serially, then every lane scales its elements.
#include <cuda_bf16.h>

extern "C" __global__ void fused_add_rms_norm_bf16(const __nv_bfloat16* x, __nv_bfloat16* residual,
                                                   const __nv_bfloat16* weight, __nv_bfloat16* out, int rows,
                                                   int cols, float eps) {
  __shared__ float partial[32];
  __shared__ float inv;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const long long base = static_cast<long long>(row) * cols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const __nv_bfloat16 h = __float2bfloat16(__bfloat162float(residual[base + c]) + __bfloat162float(x[base + c]));
    residual[base + c] = h;
    const float hf = __bfloat162float(h);
    s += hf * hf;
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
    out[base + c] = __float2bfloat16(__bfloat162float(residual[base + c]) * inv * __bfloat162float(weight[c]));
}

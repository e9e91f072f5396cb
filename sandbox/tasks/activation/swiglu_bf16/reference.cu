// Reference: one output per thread, silu(g) * u in float, rounded once to bfloat16.
#include <cuda_bf16.h>

extern "C" __global__ void swiglu_bf16(const __nv_bfloat16* x, __nv_bfloat16* out, int tokens, int hidden) {
  const int t = blockIdx.y;
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tokens || j >= hidden) return;
  const __nv_bfloat16* row = x + static_cast<long long>(t) * 2 * hidden;
  const float g = __bfloat162float(row[j]), u = __bfloat162float(row[hidden + j]);
  out[static_cast<long long>(t) * hidden + j] = __float2bfloat16(g / (1.0f + expf(-g)) * u);
}

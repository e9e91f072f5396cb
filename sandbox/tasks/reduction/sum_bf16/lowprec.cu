// Low precision: one thread per row adds the row in order with a bfloat16 accumulator (every partial
// sum rounded to bfloat16); everything else right.
// leap-launch: sum_bf16 grid=ceil_div(rows, 256) block=256
#include <cuda_bf16.h>

extern "C" __global__ void sum_bf16(const __nv_bfloat16* x, __nv_bfloat16* out, int rows, int cols) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const __nv_bfloat16* p = x + static_cast<long long>(row) * cols;
  __nv_bfloat16 s = __float2bfloat16(0.0f);
  for (int c = 0; c < cols; ++c) s = __hadd(s, p[c]);
  out[row] = s;
}

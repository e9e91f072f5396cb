// Does not compile: a missing semicolon after the destination pointer.
#include <cuda_bf16.h>

extern "C" __global__ void embedding_gather_bf16(const int* ids, const __nv_bfloat16* table, __nv_bfloat16* out,
                                                 int tokens, int dim) {
  const int t = blockIdx.x;
  if (t >= tokens) return;
  const __nv_bfloat16* src = table + static_cast<long long>(ids[t]) * dim;
  __nv_bfloat16* dst = out + static_cast<long long>(t) * dim
  for (int c = threadIdx.x; c < dim; c += blockDim.x) dst[c] = src[c];
}

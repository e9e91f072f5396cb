// Subtly wrong: the table's row pitch is rounded up to an even count of elements (to copy in pairs), so rows of
// an odd dim are read from the wrong offsets.
#include <cuda_bf16.h>

extern "C" __global__ void embedding_gather_bf16(const int* ids, const __nv_bfloat16* table, __nv_bfloat16* out,
                                                 int tokens, int dim) {
  const int t = blockIdx.x;
  if (t >= tokens) return;
  const int pitch = (dim + 1) / 2 * 2;
  const int id = min(ids[t], static_cast<int>((8192LL * dim - dim) / pitch));
  const __nv_bfloat16* src = table + static_cast<long long>(id) * pitch;
  __nv_bfloat16* dst = out + static_cast<long long>(t) * dim;
  for (int c = threadIdx.x; c < dim; c += blockDim.x) dst[c] = src[c];
}

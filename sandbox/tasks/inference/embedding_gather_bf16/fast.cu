// Faster: 16-byte copies (eight bfloat16) when dim is a multiple of 8, raw bits without conversions.
#include <cuda_bf16.h>

extern "C" __global__ void embedding_gather_bf16(const int* ids, const __nv_bfloat16* table, __nv_bfloat16* out,
                                                 int tokens, int dim) {
  const int t = blockIdx.x;
  if (t >= tokens) return;
  const __nv_bfloat16* src = table + static_cast<long long>(ids[t]) * dim;
  __nv_bfloat16* dst = out + static_cast<long long>(t) * dim;
  if (dim % 8 == 0) {
    const uint4* s = reinterpret_cast<const uint4*>(src);
    uint4* d = reinterpret_cast<uint4*>(dst);
    for (int c = threadIdx.x; c < dim / 8; c += blockDim.x) d[c] = s[c];
  } else {
    const unsigned short* s = reinterpret_cast<const unsigned short*>(src);
    unsigned short* d = reinterpret_cast<unsigned short*>(dst);
    for (int c = threadIdx.x; c < dim; c += blockDim.x) d[c] = s[c];
  }
}

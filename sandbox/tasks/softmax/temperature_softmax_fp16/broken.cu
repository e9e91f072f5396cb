#include <math_constants.h>
// Does not compile: __half2float is given a __half2 pair.
#include <cuda_fp16.h>

extern "C" __global__ void temperature_softmax_fp16(const __half* logits, __half* out, int rows, int vocab,
                                                    float temperature) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  const __half2* p2 = reinterpret_cast<const __half2*>(logits + static_cast<long long>(row) * vocab);
  __half* q = out + static_cast<long long>(row) * vocab;
  float m = -CUDART_INF_F;
  for (int c = threadIdx.x; c < vocab / 2; c += blockDim.x) m = fmaxf(m, __half2float(p2[c]) / temperature);
  for (int c = threadIdx.x; c < vocab; c += blockDim.x) q[c] = __float2half(m);
}

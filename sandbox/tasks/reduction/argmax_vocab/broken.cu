// Does not compile: the shuffle is given a mask and a value but no source lane.
extern "C" __global__ void argmax_vocab(const float* logits, int* out, int rows, int vocab) {
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = logits + static_cast<long long>(row) * vocab;
  float bv = -3.0e38f;
  int bi = 0;
  for (int c = threadIdx.x; c < vocab; c += blockDim.x)
    if (p[c] > bv) { bv = p[c]; bi = c; }
  for (int o = 16; o > 0; o /= 2) {
    const float v = __shfl_xor_sync(0xffffffffu, bv);
    const int i = __shfl_xor_sync(0xffffffffu, bi, o);
    if (v > bv || (v == bv && i < bi)) { bv = v; bi = i; }
  }
  if (threadIdx.x == 0) out[row] = bi;
}

// Faster: only the 2 x 2 taps of the output's parity are visited (no divisibility tests in the loop),
// and the block's weights for those taps are staged in shared memory 16 input channels at a time.
#define CCHUNK 16
extern "C" __global__ void conv_transpose2d(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias, float* __restrict__ y, int N, int Cin, int H, int W, int Cout) {
  __shared__ float ws[CCHUNK * 16];
  const int OH = 2 * H, OW = 2 * W;
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  const int co = blockIdx.y, n = blockIdx.z;
  const bool active = p < OH * OW;
  const int oh = active ? p / OW : 0, ow = active ? p % OW : 0;
  // Taps with kh = (oh + 1) % 2 and kh + 2 reach this row, from input rows (oh + 1 - kh) / 2.
  const int kh0 = (oh + 1) & 1, kw0 = (ow + 1) & 1;
  const int ih0 = (oh + 1 - kh0) / 2, iw0 = (ow + 1 - kw0) / 2;  // tap kh0 + 2 reads row ih0 - 1
  float acc = active ? bias[co] : 0.0f;
  for (int c0 = 0; c0 < Cin; c0 += CCHUNK) {
    const int cc = min(CCHUNK, Cin - c0);
    __syncthreads();
    for (int t = threadIdx.x; t < cc * 16; t += blockDim.x) ws[t] = w[(static_cast<long long>(c0 + t / 16) * Cout + co) * 16 + t % 16];
    __syncthreads();
    if (!active) continue;
    for (int c = 0; c < cc; ++c) {
      const float* xc = x + (static_cast<long long>(n) * Cin + c0 + c) * H * W;
#pragma unroll
      for (int a = 0; a < 2; ++a) {
        const int ih = ih0 - a, kh = kh0 + 2 * a;
        if (ih < 0 || ih >= H) continue;
#pragma unroll
        for (int b = 0; b < 2; ++b) {
          const int iw = iw0 - b, kw = kw0 + 2 * b;
          if (iw >= 0 && iw < W) acc += xc[static_cast<long long>(ih) * W + iw] * ws[c * 16 + kh * 4 + kw];
        }
      }
    }
  }
  if (active) y[(static_cast<long long>(n) * Cout + co) * OH * OW + p] = acc;
}

// Reference: one output per thread, gathering the inputs that the stride-2 scatter sends here: tap kh
// reaches output row oh from input row (oh + 1 - kh) / 2 when that division is exact.
extern "C" __global__ void conv_transpose2d(const float* x, const float* w, const float* bias, float* y, int N, int Cin, int H, int W, int Cout) {
  const int OH = 2 * H, OW = 2 * W;
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  const int co = blockIdx.y, n = blockIdx.z;
  if (p >= OH * OW) return;
  const int oh = p / OW, ow = p % OW;
  float acc = bias[co];
  for (int ci = 0; ci < Cin; ++ci)
    for (int kh = 0; kh < 4; ++kh) {
      const int th = oh + 1 - kh;
      if (th < 0 || th % 2 != 0 || th / 2 >= H) continue;
      for (int kw = 0; kw < 4; ++kw) {
        const int tw = ow + 1 - kw;
        if (tw < 0 || tw % 2 != 0 || tw / 2 >= W) continue;
        acc += x[((static_cast<long long>(n) * Cin + ci) * H + th / 2) * W + tw / 2] * w[((static_cast<long long>(ci) * Cout + co) * 4 + kh) * 4 + kw];
      }
    }
  y[(static_cast<long long>(n) * Cout + co) * OH * OW + p] = acc;
}

// Wrong: the padding is forgotten (window starts at p, not p - 2), shifting every output by two samples.
#define KS 5
#define PAD 2
extern "C" __global__ void conv1d(const float* x, const float* w, const float* bias, float* y, int N, int C, int L, int F) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  const int f = blockIdx.y, n = blockIdx.z;
  if (p >= L) return;
  float acc = bias[f];
  for (int c = 0; c < C; ++c)
    for (int k = 0; k < KS; ++k) {
      const int i = p + k;
      if (i >= 0 && i < L) acc += x[(static_cast<long long>(n) * C + c) * L + i] * w[(static_cast<long long>(f) * C + c) * KS + k];
    }
  y[(static_cast<long long>(n) * F + f) * L + p] = acc;
}

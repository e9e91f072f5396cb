// Does not compile: a const input row is bound to a non-const pointer.
extern "C" __global__ void conv2d_depthwise(const float* x, const float* w, const float* bias, float* y, int N, int C, int H, int W) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  const int c = blockIdx.y, n = blockIdx.z;
  if (p >= H * W) return;
  const int oh = p / W, ow = p % W;
  float* xc = x + (static_cast<long long>(n) * C + c) * H * W;
  float acc = bias[c];
  for (int kh = 0; kh < 3; ++kh)
    for (int kw = 0; kw < 3; ++kw) {
      const int ih = oh - 1 + kh, iw = ow - 1 + kw;
      if (ih >= 0 && ih < H && iw >= 0 && iw < W) acc += xc[static_cast<long long>(ih) * W + iw] * w[c * 9 + kh * 3 + kw];
    }
  y[(static_cast<long long>(n) * C + c) * H * W + p] = acc;
}

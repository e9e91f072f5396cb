// Does not compile: the pointwise weight is indexed with two subscripts on a flat pointer.
extern "C" __global__ void conv2d_separable(const float* x, const float* dw, const float* db, const float* pw, const float* pb, float* y,
                                            int N, int C, int H, int W, int F) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  const int f = blockIdx.y, n = blockIdx.z;
  if (p >= H * W) return;
  const int oh = p / W, ow = p % W;
  float acc = pb[f];
  for (int c = 0; c < C; ++c) {
    const float* xc = x + (static_cast<long long>(n) * C + c) * H * W;
    float d = db[c];
    for (int kh = 0; kh < 3; ++kh)
      for (int kw = 0; kw < 3; ++kw) {
        const int ih = oh - 1 + kh, iw = ow - 1 + kw;
        if (ih >= 0 && ih < H && iw >= 0 && iw < W) d += xc[static_cast<long long>(ih) * W + iw] * dw[c * 9 + kh * 3 + kw];
      }
    acc += pw[f][c] * d;
  }
  y[(static_cast<long long>(n) * F + f) * H * W + p] = acc;
}

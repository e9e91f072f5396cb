// Reference: one output per thread, the 3 x 3 x 3 window of every input channel read straight from
// global memory, padding taps skipped.
extern "C" __global__ void conv3d(const float* x, const float* w, const float* bias, float* y, int N, int C, int D, int H, int W, int F) {
  const long long p = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int f = blockIdx.y, n = blockIdx.z;
  if (p >= static_cast<long long>(D) * H * W) return;
  const int od = static_cast<int>(p / (static_cast<long long>(H) * W));
  const int oh = static_cast<int>(p / W % H), ow = static_cast<int>(p % W);
  float acc = bias[f];
  for (int c = 0; c < C; ++c)
    for (int kd = 0; kd < 3; ++kd)
      for (int kh = 0; kh < 3; ++kh)
        for (int kw = 0; kw < 3; ++kw) {
          const int id = od - 1 + kd, ih = oh - 1 + kh, iw = ow - 1 + kw;
          if (id < 0 || id >= D || ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
          acc += x[(((static_cast<long long>(n) * C + c) * D + id) * H + ih) * W + iw] * w[(((static_cast<long long>(f) * C + c) * 3 + kd) * 3 + kh) * 3 + kw];
        }
  y[(static_cast<long long>(n) * F + f) * D * H * W + p] = acc;
}

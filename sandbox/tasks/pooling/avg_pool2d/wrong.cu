// Subtly wrong: the window's column loop stops one short (kw < 2).
extern "C" __global__ void avg_pool2d(const float* x, float* out, int planes, int height, int width, int out_height, int out_width) {
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<long long>(planes) * out_height * out_width) return;
  const int ow = static_cast<int>(idx % out_width);
  const int oh = static_cast<int>((idx / out_width) % out_height);
  const long long plane = (idx / out_width / out_height);
  const float* p = x + plane * static_cast<long long>(height) * width;
  float acc = 0.0f;
  for (int kh = 0; kh < 3; ++kh) {
    const int ih = oh * 3 + kh;
    if (ih < 0 || ih >= height) continue;
    for (int kw = 0; kw < 2; ++kw) {
      const int iw = ow * 3 + kw;
      if (iw < 0 || iw >= width) continue;
      const float v = p[ih * width + iw];
      acc += v;
    }
  }
  out[idx] = acc / 9.0f;  // padding counts: the divisor is always the window's 9 taps
}

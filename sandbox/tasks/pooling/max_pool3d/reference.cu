// Reference: one thread per output element (a flat index over planes and output positions) visits
// the window's taps in order, skips those in the padding, and writes the maximum over the in-range taps.
extern "C" __global__ void max_pool3d(const float* x, float* out, int planes, int depth, int height, int width, int out_depth, int out_height, int out_width) {
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<long long>(planes) * out_depth * out_height * out_width) return;
  const int ow = static_cast<int>(idx % out_width);
  const int oh = static_cast<int>((idx / out_width) % out_height);
  const int od = static_cast<int>((idx / out_width / out_height) % out_depth);
  const long long plane = (idx / out_width / out_height / out_depth);
  const float* p = x + plane * static_cast<long long>(depth) * height * width;
  float acc = -__int_as_float(0x7f800000);  // -inf: padding never wins
  for (int kd = 0; kd < 3; ++kd) {
    const int id = od * 2 - 1 + kd * 3;
    if (id < 0 || id >= depth) continue;
    for (int kh = 0; kh < 3; ++kh) {
      const int ih = oh * 2 - 1 + kh * 3;
      if (ih < 0 || ih >= height) continue;
      for (int kw = 0; kw < 3; ++kw) {
        const int iw = ow * 2 - 1 + kw * 3;
        if (iw < 0 || iw >= width) continue;
        const float v = p[(static_cast<long long>(id) * height + ih) * width + iw];
        acc = v > acc ? v : acc;
      }
    }
  }
  out[idx] = acc;
}

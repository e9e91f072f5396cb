// Does not compile: start_h is declared twice.
// leap-launch: avg_pool2d grid=(ceil_div((width - 3) / 3 + 1, 128), (height - 3) / 3 + 1, batch * channels) block=128
extern "C" __global__ void avg_pool2d(const float* x, float* out, int planes, int height, int width, int out_height, int out_width) {
  const int ow = blockIdx.x * blockDim.x + threadIdx.x;
  if (ow >= out_width) return;
  const int oh = blockIdx.y;
  const long long plane = blockIdx.z;
  const float* p = x + plane * static_cast<long long>(height) * width;
  const int start_h = oh * 3;
  const int start_h = 0;
  int lo_h = 0, hi_h = 3;  // the taps k with 0 <= start + k < height
  while (lo_h < 3 && start_h + lo_h < 0) ++lo_h;
  while (hi_h > lo_h && start_h + (hi_h - 1) >= height) --hi_h;
  const int start_w = ow * 3;
  int lo_w = 0, hi_w = 3;  // the taps k with 0 <= start + k < width
  while (lo_w < 3 && start_w + lo_w < 0) ++lo_w;
  while (hi_w > lo_w && start_w + (hi_w - 1) >= width) --hi_w;
  float acc = 0.0f;
  for (int kh = lo_h; kh < hi_h; ++kh) {
    const long long row_h = static_cast<long long>(start_h + kh) * width;
    for (int kw = lo_w; kw < hi_w; ++kw) {
      const float v = __ldg(p + row_h + start_w + kw);
      acc += v;
    }
  }
  out[(plane * out_height + oh) * out_width + ow] = acc * (1.0f / 9.0f);
}

// Does not compile: blockIdx (a uint3) is assigned to an int.
// leap-launch: max_pool3d grid=(ceil_div((width + 2 - 7) / 2 + 1, 128), (height + 2 - 7) / 2 + 1, batch * channels * ((depth + 2 - 7) / 2 + 1)) block=128
extern "C" __global__ void max_pool3d(const float* x, float* out, int planes, int depth, int height, int width, int out_depth, int out_height, int out_width) {
  const int ow = blockIdx.x * blockDim.x + threadIdx.x;
  if (ow >= out_width) return;
  const int oh = blockIdx;
  const int od = blockIdx.z % out_depth;
  const long long plane = blockIdx.z / out_depth;
  const float* p = x + plane * static_cast<long long>(depth) * height * width;
  const int start_d = od * 2 - 1;
  int lo_d = 0, hi_d = 3;  // the taps k with 0 <= start + k * 3 < depth
  while (lo_d < 3 && start_d + lo_d * 3 < 0) ++lo_d;
  while (hi_d > lo_d && start_d + (hi_d - 1) * 3 >= depth) --hi_d;
  const int start_h = oh * 2 - 1;
  int lo_h = 0, hi_h = 3;  // the taps k with 0 <= start + k * 3 < height
  while (lo_h < 3 && start_h + lo_h * 3 < 0) ++lo_h;
  while (hi_h > lo_h && start_h + (hi_h - 1) * 3 >= height) --hi_h;
  const int start_w = ow * 2 - 1;
  int lo_w = 0, hi_w = 3;  // the taps k with 0 <= start + k * 3 < width
  while (lo_w < 3 && start_w + lo_w * 3 < 0) ++lo_w;
  while (hi_w > lo_w && start_w + (hi_w - 1) * 3 >= width) --hi_w;
  float acc = -__int_as_float(0x7f800000);
  for (int kd = lo_d; kd < hi_d; ++kd) {
    const long long row_d = static_cast<long long>(start_d + kd * 3) * height;
    for (int kh = lo_h; kh < hi_h; ++kh) {
      const long long row_h = (row_d + start_h + kh * 3) * width;
      for (int kw = lo_w; kw < hi_w; ++kw) {
        const float v = __ldg(p + row_h + start_w + kw * 3);
        acc = fmaxf(acc, v);
      }
    }
  }
  out[((plane * out_depth + od) * out_height + oh) * out_width + ow] = acc;
}

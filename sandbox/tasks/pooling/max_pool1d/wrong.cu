// Subtly wrong: the dilation is ignored (taps one apart instead of three).
extern "C" __global__ void max_pool1d(const float* x, float* out, int planes, int length, int out_length) {
  const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= static_cast<long long>(planes) * out_length) return;
  const int ol = static_cast<int>(idx % out_length);
  const long long plane = (idx / out_length);
  const float* p = x + plane * static_cast<long long>(length);
  float acc = -__int_as_float(0x7f800000);  // -inf: padding never wins
  for (int kl = 0; kl < 4; ++kl) {
    const int il = ol * 2 - 2 + kl;
    if (il < 0 || il >= length) continue;
    const float v = p[il];
    acc = v > acc ? v : acc;
  }
  out[idx] = acc;
}

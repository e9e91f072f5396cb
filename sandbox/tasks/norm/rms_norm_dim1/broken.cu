// Does not compile: count is declared twice, the second time from an undeclared s.
// leap-launch: rms_norm_dim1 grid=(ceil_div(height * width, 1024), batch) block=256
extern "C" __global__ void rms_norm_dim1(const float* x, float* out, int batch, int features, int hw, float eps) {
  const int n = blockIdx.y;
  const int j0 = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
  if (n >= batch || j0 >= hw) return;
  const long long start = static_cast<long long>(n) * features * hw + j0;
  if ((hw & 3) == 0) {
    float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int c = 0; c < features; ++c) {
      const float4 v = *reinterpret_cast<const float4*>(x + start + static_cast<long long>(c) * hw);
      s.x += v.x * v.x;
      s.y += v.y * v.y;
      s.z += v.z * v.z;
      s.w += v.w * v.w;
    }
    const float4 inv = make_float4(rsqrtf(s.x / features + eps), rsqrtf(s.y / features + eps), rsqrtf(s.z / features + eps),
                                   rsqrtf(s.w / features + eps));
    for (int c = 0; c < features; ++c) {
      const long long at = start + static_cast<long long>(c) * hw;
      const float4 v = *reinterpret_cast<const float4*>(x + at);
      *reinterpret_cast<float4*>(out + at) = make_float4(v.x * inv.x, v.y * inv.y, v.z * inv.z, v.w * inv.w);
    }
    return;
  }
  const int count = hw - j0 < 4 ? hw - j0 : 4;
  const float4 count = s;
  for (int k = 0; k < count; ++k) {
    float s = 0.0f;
    for (int c = 0; c < features; ++c) {
      const float v = x[start + k + static_cast<long long>(c) * hw];
      s += v * v;
    }
    const float inv = rsqrtf(s / features + eps);
    for (int c = 0; c < features; ++c) out[start + k + static_cast<long long>(c) * hw] = x[start + k + static_cast<long long>(c) * hw] * inv;
  }
}

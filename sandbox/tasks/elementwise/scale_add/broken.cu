// Does not compile: float4 has no member 'v'.
extern "C" __global__ void scale_add(const float* x, const float* y, float* out, float alpha, int n) {
  const long long base = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (base + 3 < n) {
    const float4 a = *reinterpret_cast<const float4*>(x + base);
    const float4 b = *reinterpret_cast<const float4*>(y + base);
    float4 r;
    r.x = alpha * a.x + b.x;
    r.y = alpha * a.y + b.y;
    r.z = alpha * a.z + b.z;
    r.w = alpha * a.v + b.w;
    *reinterpret_cast<float4*>(out + base) = r;
  } else {
    for (long long i = base; i < n; ++i) out[i] = alpha * x[i] + y[i];
  }
}

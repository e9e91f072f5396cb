// Faster: a 16-byte float4 load and store per thread (four elements), the last n % 4 elements
// one at a time; a quarter of the threads and of the memory instructions.
// leap-launch: gelu grid=ceil_div(n, 1024) block=256
__device__ __forceinline__ float act(float v) {
  return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

extern "C" __global__ void gelu(const float* x, float* out, int n) {
  const long long i = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (i + 3 < n) {
    const float4 v = *reinterpret_cast<const float4*>(x + i);
    *reinterpret_cast<float4*>(out + i) = make_float4(act(v.x), act(v.y), act(v.z), act(v.w));
  } else {
    for (long long k = i; k < n; ++k) out[k] = act(x[k]);
  }
}

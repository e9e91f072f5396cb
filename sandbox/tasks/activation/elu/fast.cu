// Faster: a 16-byte float4 load and store per thread (four elements), the last n % 4 elements
// one at a time; a quarter of the threads and of the memory instructions.
// leap-launch: elu grid=ceil_div(n, 1024) block=256
__device__ __forceinline__ float act(float v, float alpha) {
  return v > 0.0f ? v : alpha * expm1f(v);
}

extern "C" __global__ void elu(const float* x, float* out, int n, float alpha) {
  const long long i = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;
  if (i + 3 < n) {
    const float4 v = *reinterpret_cast<const float4*>(x + i);
    *reinterpret_cast<float4*>(out + i) = make_float4(act(v.x, alpha), act(v.y, alpha), act(v.z, alpha), act(v.w, alpha));
  } else {
    for (long long k = i; k < n; ++k) out[k] = act(x[k], alpha);
  }
}

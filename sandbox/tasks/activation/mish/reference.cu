// Reference: one element per thread.
__device__ __forceinline__ float act(float v) {
  const float sp = v > 20.0f ? v : log1pf(expf(v));
  return v * tanhf(sp);
}

extern "C" __global__ void mish(const float* x, float* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i]);
}

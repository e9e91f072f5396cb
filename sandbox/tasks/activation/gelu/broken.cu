// Does not compile: k_inv_sqrt2 is never declared.
__device__ __forceinline__ float act(float v) {
  return 0.5f * v * (1.0f + erff(v * k_inv_sqrt2));
}

extern "C" __global__ void gelu(const float* x, float* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i]);
}

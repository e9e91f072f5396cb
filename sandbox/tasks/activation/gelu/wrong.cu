// Subtly wrong: the 1/sqrt(2) inside erf is forgotten.
__device__ __forceinline__ float act(float v) {
  return 0.5f * v * (1.0f + erff(v));
}

extern "C" __global__ void gelu(const float* x, float* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i]);
}

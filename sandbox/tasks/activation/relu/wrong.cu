// Subtly wrong: negatives are reflected (|x|) instead of clamped to 0.
__device__ __forceinline__ float act(float v) {
  return v >= 0.0f ? v : -v;
}

extern "C" __global__ void relu(const float* x, float* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i]);
}

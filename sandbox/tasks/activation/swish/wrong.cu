// Subtly wrong: the exponent's sign is lost: x * sigmoid(-x).
__device__ __forceinline__ float act(float v) {
  return v / (1.0f + expf(v));
}

extern "C" __global__ void swish(const float* x, float* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i]);
}

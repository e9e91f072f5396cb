// Subtly wrong: a misplaced parenthesis: alpha * exp(x) - 1 instead of alpha * (exp(x) - 1).
__device__ __forceinline__ float act(float v, float alpha) {
  return v > 0.0f ? v : alpha * expf(v) - 1.0f;
}

extern "C" __global__ void elu(const float* x, float* out, int n, float alpha) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i], alpha);
}

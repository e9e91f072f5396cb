// Reference: one element per thread.
__device__ __forceinline__ float act(float v, float alpha) {
  return v > 0.0f ? v : alpha * expm1f(v);
}

extern "C" __global__ void elu(const float* x, float* out, int n, float alpha) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i], alpha);
}

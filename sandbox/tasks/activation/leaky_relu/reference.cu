// Reference: one element per thread.
__device__ __forceinline__ float act(float v, float slope) {
  return v >= 0.0f ? v : slope * v;
}

extern "C" __global__ void leaky_relu(const float* x, float* out, int n, float slope) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i], slope);
}

// Reference: one element per thread.
__device__ __forceinline__ float act(float v) {
  return fminf(v, 0.0f) - log1pf(expf(-fabsf(v)));
}

extern "C" __global__ void log_sigmoid(const float* x, float* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i]);
}

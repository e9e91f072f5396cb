// Reference: one element per thread.
__device__ __forceinline__ float act(float v) {
  return fminf(fmaxf(v / 6.0f + 0.5f, 0.0f), 1.0f);
}

extern "C" __global__ void hardsigmoid(const float* x, float* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i]);
}

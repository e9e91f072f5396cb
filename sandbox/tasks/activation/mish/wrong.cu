// Subtly wrong: the log1p of softplus is forgotten: x * tanh(exp(x)).
__device__ __forceinline__ float act(float v) {
  return v * tanhf(expf(v));
}

extern "C" __global__ void mish(const float* x, float* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i]);
}

// Subtly wrong: the naive form: expf(-x) overflows for x < -88.7 and the result is -inf.
__device__ __forceinline__ float act(float v) {
  return logf(1.0f / (1.0f + expf(-v)));
}

extern "C" __global__ void log_sigmoid(const float* x, float* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i]);
}

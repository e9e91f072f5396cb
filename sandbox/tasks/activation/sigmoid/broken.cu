// Does not compile: a parenthesis is left open.
__device__ __forceinline__ float act(float v) {
  return 1.0f / (1.0f + expf(-v);
}

extern "C" __global__ void sigmoid(const float* x, float* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i]);
}

// Does not compile: auto without an initializer.
__device__ __forceinline__ float act(float v) {
  auto sp;
  return v * tanhf(sp);
}

extern "C" __global__ void mish(const float* x, float* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i]);
}

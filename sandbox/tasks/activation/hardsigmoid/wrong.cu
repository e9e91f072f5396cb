// Subtly wrong: the slope 0.2 of Keras' and ONNX's hard sigmoid instead of PyTorch's 1/6.
__device__ __forceinline__ float act(float v) {
  return fminf(fmaxf(0.2f * v + 0.5f, 0.0f), 1.0f);
}

extern "C" __global__ void hardsigmoid(const float* x, float* out, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = act(x[i]);
}

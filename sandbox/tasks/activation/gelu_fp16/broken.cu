// Does not compile: __half is used without including <cuda_fp16.h>.
__device__ __forceinline__ float gelu(float v) {
  return 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
}

extern "C" __global__ void gelu_fp16(const __half* x, __half* out, int n) {
  const long long i = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 2;
  if (i < n) out[i] = __float2half(gelu(__half2float(x[i])));
}

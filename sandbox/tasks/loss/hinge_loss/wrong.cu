// Subtly wrong: the clamp at 0 is forgotten: mean(1 - predictions * targets).
__device__ __forceinline__ float term(float p, float t) {
  return 1.0f - p * t;
}

extern "C" __global__ void hinge_loss(const float* predictions, const float* targets, float* out, int rows, int cols) {
  __shared__ float partial[256];
  const long long n = static_cast<long long>(rows) * cols;
  const long long base = static_cast<long long>(blockIdx.x) * 2048 + threadIdx.x;
  float s = 0.0f;
  for (int k = 0; k < 8; ++k) {
    const long long i = base + k * 256;
    if (i < n) s += term(predictions[i], targets[i]);
  }
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0] / static_cast<float>(n));
}

// Reference: the norm covers the whole tensor and a launch is one kernel, so a single block of 1024
// threads does it all: strided sums of squares, a shared-memory tree, then the scaled copy. Slow but
// plainly right; a real kernel spreads the sum over the GPU (see the launch-plan note in the task).
extern "C" __global__ void frobenius_norm(const float* x, float* out, int n) {
  __shared__ float partial[1024];
  const int t = threadIdx.x;
  float s = 0.0f;
  for (int i = t; i < n; i += blockDim.x) s += x[i] * x[i];
  partial[t] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  const float norm = sqrtf(partial[0]);
  for (int i = t; i < n; i += blockDim.x) out[i] = x[i] / norm;
}

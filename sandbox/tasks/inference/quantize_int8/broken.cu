// Does not compile: fmaxf is given three arguments in the clamp.
extern "C" __global__ void quantize_int8(const float* x, signed char* q, float* scale, int rows, int cols) {
  __shared__ float absmax;
  const int row = blockIdx.x;
  if (row >= rows) return;
  const float* p = x + static_cast<long long>(row) * cols;
  if (threadIdx.x == 0) {
    absmax = 0.0f;
    for (int c = 0; c < cols; ++c) absmax = fmaxf(absmax, fabsf(p[c]));
    scale[row] = absmax / 127.0f;
  }
  __syncthreads();
  for (int c = threadIdx.x; c < cols; c += blockDim.x)
    q[static_cast<long long>(row) * cols + c] = static_cast<signed char>(fmaxf(rintf(p[c] * 127.0f / absmax), -127.0f, 127.0f));
}

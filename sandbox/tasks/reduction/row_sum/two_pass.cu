// Two kernels with a launch plan: every 1024-column chunk of a row is summed into scratch, then one
// warp per row adds its chunks. More blocks in flight than one per row when rows are few and long.
// leap-scratch: partials float32 rows * ceil_div(cols, 1024)
// leap-launch: row_chunk_sums grid=(ceil_div(cols, 1024), rows) block=256 shared=256 * 4 args=(x, partials, rows, cols)
// leap-launch: row_chunk_total grid=rows block=32 args=(partials, out, rows, cols)

extern "C" __global__ void row_chunk_sums(const float* x, float* partials, int rows, int cols) {
  extern __shared__ float part[];
  const int chunk = blockIdx.x, row = blockIdx.y, chunks = (cols + 1023) / 1024;
  const float* p = x + static_cast<long long>(row) * cols;
  const int end = (chunk + 1) * 1024 < cols ? (chunk + 1) * 1024 : cols;
  float s = 0.0f;
  for (int c = chunk * 1024 + threadIdx.x; c < end; c += blockDim.x) s += p[c];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) part[threadIdx.x] += part[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0 && row < rows) partials[static_cast<long long>(row) * chunks + chunk] = part[0];
}

extern "C" __global__ void row_chunk_total(const float* partials, float* out, int rows, int cols) {
  const int row = blockIdx.x, chunks = (cols + 1023) / 1024;
  float s = 0.0f;
  for (int c = threadIdx.x; c < chunks; c += 32) s += partials[static_cast<long long>(row) * chunks + c];
  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset);
  if (threadIdx.x == 0 && row < rows) out[row] = s;
}

// Reference: reads coalesced, writes strided by rows (uncoalesced).
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
  const int c = blockIdx.x * 32 + threadIdx.x;
  for (int j = 0; j < 32; j += 8) {
    const int r = blockIdx.y * 32 + threadIdx.y + j;
    if (r < rows && c < cols) out[static_cast<long long>(c) * rows + r] = in[static_cast<long long>(r) * cols + c];
  }
}

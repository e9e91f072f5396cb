// Subtly wrong: the int8 value is taken as an unsigned byte (its low 8 bits), so negative values become 129..255.
extern "C" __global__ void dequantize_int8(const signed char* q, const float* scale, float* out, int rows, int cols) {
  const int r = blockIdx.y;
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows || c >= cols) return;
  const long long i = static_cast<long long>(r) * cols + c;
  out[i] = static_cast<float>(q[i] & 0xff) * scale[r];
}

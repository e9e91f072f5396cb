// Does not compile: lo is declared twice.
// leap-launch: cumsum_dim1 grid=(ceil_div(inner, 32), batch) block=(32, 8)
extern "C" __global__ void cumsum_dim1(const float* x, float* out, int batch, int len, int inner) {
  __shared__ float total[8][32];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.x * 32 + tx;
  const int b = blockIdx.y;
  const bool live = i < inner && b < batch;
  const int per = (len + 7) / 8;
  const int lo = 0;
  const int lo = ty * per < len ? ty * per : len;
  const int hi = lo + per < len ? lo + per : len;
  const long long start = static_cast<long long>(b) * len * inner + i;
  float s = 0.0f;
  if (live)
#pragma unroll 4
    for (int d = lo; d < hi; ++d) s += x[start + static_cast<long long>(d) * inner];
  total[ty][tx] = s;
  __syncthreads();
  float run = 0.0f;
  for (int k = 0; k < ty; ++k) run += total[k][tx];
  if (live)
    for (int d = lo; d < hi; ++d) {
      run += x[start + static_cast<long long>(d) * inner];
      out[start + static_cast<long long>(d) * inner] = run;
    }
}

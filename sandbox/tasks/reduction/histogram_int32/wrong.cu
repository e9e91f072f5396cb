// Subtly wrong: out-of-range values are clamped into the edge bins instead of ignored.
extern "C" __global__ void histogram_int32(const int* values, int* counts, int n, int bins) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int v = min(max(values[i], 0), bins - 1);
  atomicAdd(&counts[v], 1);
}

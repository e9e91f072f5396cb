// Reference: one global atomicAdd per value that falls in [0, bins).
extern "C" __global__ void histogram_int32(const int* values, int* counts, int n, int bins) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int v = values[i];
  if (v >= 0 && v < bins) atomicAdd(&counts[v], 1);
}

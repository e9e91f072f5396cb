// Faster: a private histogram per block in shared memory (bins <= 12288), a grid-stride loop over the values so
// each block flushes once, and only nonzero bins added to global memory. Larger bins use global atomics.
// leap-launch: histogram_int32 grid=(min(ceil_div(n, 4096), 1056)) block=(512) shared=min(bins, 12288) * 4 args=(values, counts, n, bins)
extern "C" __global__ void histogram_int32(const int* values, int* counts, int n, int bins) {
  extern __shared__ int local[];
  const bool private_bins = bins <= 12288;
  if (private_bins) {
    for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    __syncthreads();
  }
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const int v = values[i];
    if (static_cast<unsigned>(v) < static_cast<unsigned>(bins)) atomicAdd(private_bins ? &local[v] : &counts[v], 1);
  }
  if (private_bins) {
    __syncthreads();
    for (int b = threadIdx.x; b < bins; b += blockDim.x)
      if (local[b] != 0) atomicAdd(&counts[b], local[b]);
  }
}

// Kernels for bench_cpu_runtime.cpp, compiled for the CPU runtime at build time.

// Threads that never wait: lazy fibers run them one after another on one stack.
extern "C" __global__ void no_wait(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x; }

// `rounds` barriers per thread: each one is a switch per thread.
extern "C" __global__ void barriers(int* out, int rounds) {
  int v = threadIdx.x;
  for (int r = 0; r < rounds; ++r) {
    v += r;
    __syncthreads();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// `rounds` full-warp shuffles per thread.
extern "C" __global__ void shuffles(int* out, int rounds) {
  int v = threadIdx.x;
  for (int r = 0; r < rounds; ++r) v += __shfl_xor_sync(0xffffffffu, v, 1);
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}

// Kernels for the CPU runtime's barrier and shared-memory tests (test_barrier.cpp).

// Each thread writes its value to shared memory; after the barrier each reads its mirror's.
extern "C" __global__ void reverse_block(const int* in, int* out) {
  __shared__ int s[256];
  const int t = threadIdx.x, n = blockDim.x;
  s[t] = in[blockIdx.x * n + t];
  __syncthreads();
  out[blockIdx.x * n + t] = s[n - 1 - t];
}

// The same without the barrier: the result depends on which thread runs first.
extern "C" __global__ void reverse_block_racy(const int* in, int* out) {
  __shared__ int s[256];
  const int t = threadIdx.x, n = blockDim.x;
  s[t] = in[blockIdx.x * n + t];
  out[blockIdx.x * n + t] = s[n - 1 - t];
}

// A tree reduction with a barrier per level, and the same missing the barrier inside the loop.
extern "C" __global__ void tree_sum(const int* in, int* out) {
  __shared__ int s[256];
  const int t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void tree_sum_missing_barrier(const int* in, int* out) {
  __shared__ int s[256];
  const int t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) s[t] += s[t + stride];
  }
  if (t == 0) out[blockIdx.x] = s[0];
}

// __syncthreads_count, _and, _or of in[t] > 0, three results per thread.
extern "C" __global__ void barrier_votes(const int* in, int* out) {
  const int t = threadIdx.x;
  const int p = in[t] > 0;
  const int count = __syncthreads_count(p);
  const int all = __syncthreads_and(p);
  const int any = __syncthreads_or(p);
  out[3 * t] = count;
  out[3 * t + 1] = all;
  out[3 * t + 2] = any;
}

// A 2D block: the linear thread index as CUDA forms it, and the block's and grid's shape.
extern "C" __global__ void indices(unsigned* out) {
  const unsigned linear = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
  const unsigned block = blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y;
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  out[block * threads + linear] = block * 10000 + linear;
}

// Static shared memory in a template (a slot per instance) and in a device function (two variables
// in one declaration). Run with 32 threads.
template <int N>
__device__ int* slot() {
  __shared__ int buf[N];
  return buf;
}
__device__ int plus_block_max(int v) {
  __shared__ int block_max, values[32];
  values[threadIdx.x] = v;
  if (threadIdx.x == 0) block_max = 0;
  __syncthreads();
  atomicMax(&block_max, v);
  __syncthreads();
  return values[(threadIdx.x + 1) % 32] + block_max;
}
extern "C" __global__ void shared_slots(const int* in, int* out) {
  const int t = threadIdx.x, v = in[t];
  int* a = slot<32>();
  int* b = slot<64>();
  a[t] = v;
  b[t] = 2 * v;
  __syncthreads();
  out[t] = a[(t + 1) % 32] + 1000 * b[(t + 1) % 32] + 1000000 * plus_block_max(v);
}

// Dynamic shared memory: a rotate by one through extern __shared__, two views of it.
extern "C" __global__ void dynamic_rotate(const float* in, float* out, int n) {
  extern __shared__ float part[];
  extern __shared__ __align__(16) unsigned char raw[];
  part[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = part[(threadIdx.x + 1) % n] + (raw[0] == reinterpret_cast<unsigned char*>(part)[0] ? 0.0f : 1.0f);
}

// Reads uninitialised shared memory: what it reads is the launch's poison.
extern "C" __global__ void read_uninitialised(unsigned* out) {
  __shared__ unsigned never_written[4];
  out[threadIdx.x] = never_written[threadIdx.x % 4];
}

// Writes one float past the launch's dynamic shared memory (n floats).
extern "C" __global__ void dynamic_overrun(int n, float* out) {
  extern __shared__ float part[];
  if (threadIdx.x == 0) part[n + 1000] = 1.0f;
  out[0] = 1.0f;
}

// Thread 0 waits at the barrier while the rest of warp 0 waits at a shuffle that needs lane 0.
extern "C" __global__ void deadlock(int* out) {
  int v = threadIdx.x;
  if (threadIdx.x == 0) {
    __syncthreads();
  } else if (threadIdx.x < 32) {
    v = __shfl_sync(0xffffffffu, v, 0);
  }
  out[threadIdx.x] = v;
}

// Two barriers on two lines that the two halves of the block take.
extern "C" __global__ void divergent(int* out) {
  if (threadIdx.x < 16) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = 1;
}

// Half of the block leaves before the barrier.
extern "C" __global__ void exit_before_barrier(int* out) {
  if (threadIdx.x >= 16) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}

extern "C" __global__ void traps(int* out) {
  out[threadIdx.x] = 1;
  if (threadIdx.x == 5) __trap();
}

#include <cassert>
extern "C" __global__ void asserts(const int* in) { assert(in[threadIdx.x] >= 0); }

// Waits for a flag another thread of the block sets after it: a GPU runs both, the CPU runtime never
// switches away from a thread that does not wait at a barrier or warp collective.
extern "C" __global__ void spin_on_flag(volatile int* flag) {
  if (threadIdx.x == 0) {
    while (*flag == 0) {
    }
  } else {
    *flag = 1;
  }
}

// Uses far more stack than the launch gives.
__device__ __noinline__ int deep(int depth, volatile int* sink) {
  volatile char frame[4096];
  frame[0] = static_cast<char>(depth);
  if (depth == 0) return frame[0];
  return deep(depth - 1, sink) + frame[0];
}
extern "C" __global__ void stack_hog(volatile int* sink) { *sink = deep(1000, sink); }

// No thread waits: the block runs on one stack.
extern "C" __global__ void no_wait(int* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = threadIdx.x; }

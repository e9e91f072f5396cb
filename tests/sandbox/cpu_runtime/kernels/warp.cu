// Kernels for the CPU runtime's warp tests (test_warp.cpp): one block, results per thread.
#include <cuda_fp16.h>

// Eight results per thread: the shuffles (full width and width 8), a 64-bit and a half shuffle.
extern "C" __global__ void shuffles(int* out) {
  const int lane = threadIdx.x % 32;
  const int v = 100 + threadIdx.x;
  int* o = out + 8 * threadIdx.x;
  o[0] = __shfl_sync(0xffffffffu, v, 3);
  o[1] = __shfl_sync(0xffffffffu, v, lane + 5, 8);
  o[2] = __shfl_up_sync(0xffffffffu, v, 2);
  o[3] = __shfl_down_sync(0xffffffffu, v, 4, 16);
  o[4] = __shfl_xor_sync(0xffffffffu, v, 1);
  o[5] = __shfl_xor_sync(0xffffffffu, v, 20, 16);
  const double d = __shfl_sync(0xffffffffu, 1e300 * (threadIdx.x + 1), 31);
  o[6] = d == 1e300 * (32 * (threadIdx.x / 32) + 32) ? 1 : 0;
  const __half h = __shfl_down_sync(0xffffffffu, __float2half(static_cast<float>(lane)), 1);
  o[7] = static_cast<int>(__half2float(h));
}

// Votes and matches: eight results per thread.
extern "C" __global__ void votes(unsigned* out) {
  const unsigned lane = threadIdx.x % 32;
  unsigned* o = out + 8 * threadIdx.x;
  o[0] = __ballot_sync(0xffffffffu, lane % 3 == 0);
  o[1] = __any_sync(0xffffffffu, lane == 7);
  o[2] = __all_sync(0xffffffffu, lane < 31);
  o[3] = __all_sync(0xffffffffu, lane < 32);
  o[4] = __match_any_sync(0xffffffffu, lane / 8);
  int pred = 0;
  o[5] = __match_all_sync(0xffffffffu, 42, &pred);
  o[6] = static_cast<unsigned>(pred);
  o[7] = __reduce_add_sync(0xffffffffu, lane) + (__reduce_max_sync(0xffffffffu, static_cast<int>(lane) - 16) << 16);
}

// Half warps, each with its own mask: a sum by shuffles inside each, and __syncwarp between.
extern "C" __global__ void half_warps(int* out) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  int v = static_cast<int>(lane);
  for (int o = 8; o > 0; o /= 2) v += __shfl_xor_sync(mask, v, o);
  __syncwarp(mask);
  out[threadIdx.x] = v;
}

// Lanes 16..31 of each warp exit; the rest vote: exited lanes take no part, and __activemask says so.
extern "C" __global__ void after_exit(unsigned* out) {
  const unsigned lane = threadIdx.x % 32;
  if (lane >= 16) return;
  out[2 * threadIdx.x] = __ballot_sync(0xffffffffu, 1);
  out[2 * threadIdx.x + 1] = __activemask();
}

// A shuffle that reads lanes that exited: the device's result is undefined.
extern "C" __global__ void read_exited_lane(int* out) {
  if (threadIdx.x % 32 >= 16) return;
  out[threadIdx.x] = __shfl_down_sync(0xffffffffu, static_cast<int>(threadIdx.x), 8);
}

// Half the lanes of a full mask shuffle, the other half vote: one mask, two collectives.
extern "C" __global__ void mismatch(int* out) {
  if (threadIdx.x % 32 < 16) {
    out[threadIdx.x] = __shfl_sync(0xffffffffu, 1, 0);
  } else {
    out[threadIdx.x] = static_cast<int>(__ballot_sync(0xffffffffu, 1));
  }
}

// A mask without the calling lane.
extern "C" __global__ void foreign_mask(int* out) { out[threadIdx.x] = __shfl_sync(0x1u, 1, 0); }

// A warp reduction (as the tasks' fast kernels write it) in every warp, then one per block.
extern "C" __global__ void warp_reduce(const float* in, float* out) {
  __shared__ float partial[32];
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
  }
}

// __activemask in two branches: each gets the lanes that reach its call site together.
extern "C" __global__ void active_in_branches(unsigned* out) {
  if (threadIdx.x % 32 < 10) {
    out[threadIdx.x] = __activemask();
  } else {
    out[threadIdx.x] = __activemask();
  }
}

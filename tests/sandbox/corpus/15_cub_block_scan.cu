// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: row_prefix_sum
#include <cub/block/block_scan.cuh>
#include <cub/block/block_load.cuh>

extern "C" __global__ void row_prefix_sum(const int* in, int* out) {
  using Load = cub::BlockLoad<int, 128, 4, cub::BLOCK_LOAD_TRANSPOSE>;
  using Scan = cub::BlockScan<int, 128>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Scan::TempStorage scan;
  } storage;
  int items[4];
  Load(storage.load).Load(in + blockIdx.x * 512, items);
  __syncthreads();
  Scan(storage.scan).InclusiveSum(items, items);
  for (int k = 0; k < 4; ++k) out[blockIdx.x * 512 + threadIdx.x * 4 + k] = items[k];
}

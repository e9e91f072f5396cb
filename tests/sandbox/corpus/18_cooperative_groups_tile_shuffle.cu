// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: tile_broadcast
// needs: sibling-includes
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

extern "C" __global__ void tile_broadcast(const int* in, int* out) {
  auto tile = cg::tiled_partition<16>(cg::this_thread_block());
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[i];
  for (int o = tile.size() / 2; o > 0; o /= 2) v += tile.shfl_down(v, o);
  out[i] = tile.shfl(v, 0);
  tile.sync();
}

// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: cg_sum
// needs: sibling-includes
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

extern "C" __global__ void cg_sum(const float* x, float* out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  float v = 0.f;
  for (int i = block.group_index().x * block.size() + block.thread_rank(); i < n; i += block.size() * gridDim.x) v += x[i];
  v = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) atomicAdd(out, v);
}

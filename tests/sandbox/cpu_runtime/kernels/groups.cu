// Kernels for the CPU runtime's cooperative-groups test (test_groups.cpp).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cg = cooperative_groups;

// Per thread: the tile-of-16 sum, the tile rank, the meta group rank, a shuffle from the tile's
// rank 3, the tile's ballot of odd ranks, the block-wide rank after a block sync, a run-time tile
// of 8's size and rank, and the tile's inclusive scan.
extern "C" __global__ void groups(const int* in, int* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
  const int v = in[block.thread_rank()];
  int* o = out + 9 * block.thread_rank();
  o[0] = cg::reduce(tile, v, cg::plus<int>());
  o[1] = static_cast<int>(tile.thread_rank());
  o[2] = static_cast<int>(tile.meta_group_rank());
  o[3] = tile.shfl(v, 3);
  o[4] = static_cast<int>(tile.ballot(tile.thread_rank() % 2 == 1));
  block.sync();
  o[5] = static_cast<int>(block.thread_rank() + 1000 * block.size());
  cg::thread_group eight = cg::tiled_partition(block, 8);
  o[6] = static_cast<int>(eight.size() * 100 + eight.thread_rank());
  o[7] = cg::inclusive_scan(tile, v);
  o[8] = cg::reduce(tile, v, cg::greater<int>());
}

#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Whole-process times of `leap-sandbox compile` against `nvcc -cubin -O3`, for kernels that include
# cooperative groups, WMMA or CUB: wall clock and CPU time (user + system of the process and every
# process it waited for), median of N runs, each run a new candidate (a line of its own at the end).
#   no PCH     compile --no-cache --no-pch
#   cold disk  compile --no-cache --pch-dir <empty directory>: makes the PCH, then uses it
#   warm disk  compile --no-cache --pch-dir <directory an earlier process filled>
# CPU time is the steadier figure on a shared machine: it does not count time spent waiting for a core.
# Usage: benchmarks/pch_cli_times.sh build/default/sandbox/leap-sandbox [runs=5]
set -euo pipefail
cli=${1:?path to leap-sandbox}
runs=${2:-5}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

write_kernels() {
  cat > "$work/cg.cu" <<'K'
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void cg_sum(const float* x, float* out, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  float v = 0.f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += x[i];
  v = cg::reduce(warp, v, cg::plus<float>());
  if (warp.thread_rank() == 0) atomicAdd(out, v);
}
K
  cat > "$work/wmma.cu" <<'K'
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;
extern "C" __global__ void wmma_gemm(const half* a, const half* b, float* c, int m, int n, int k) {
  const int wm = (blockIdx.x * blockDim.x + threadIdx.x) / 32, wn = blockIdx.y * blockDim.y + threadIdx.y;
  if (wm * 16 >= m || wn * 16 >= n) return;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int kk = 0; kk < k; kk += 16) {
    wmma::load_matrix_sync(fa, a + wm * 16 * k + kk, k);
    wmma::load_matrix_sync(fb, b + wn * 16 * k + kk, k);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(c + wm * 16 * n + wn * 16, acc, n, wmma::mem_row_major);
}
K
  cat > "$work/cub.cu" <<'K'
#include <cuda_fp16.h>
#include <cub/block/block_reduce.cuh>
extern "C" __global__ void block_sum_half(const __half* x, float* out, int n) {
  using Reduce = cub::BlockReduce<float, 256>;
  __shared__ typename Reduce::TempStorage storage;
  float v = 0.f;
  for (int i = blockIdx.x * 256 + threadIdx.x; i < n; i += 256 * gridDim.x) v += __half2float(x[i]);
  const float total = Reduce(storage).Sum(v);
  if (threadIdx.x == 0) atomicAdd(out, total);
}
K
}

# Runs "$@" once; prints "wall_ms cpu_ms".
timed() {
  /usr/bin/time -f '%e %U %S' -o "$work/t" "$@" > /dev/null 2> "$work/err" || { cat "$work/err" >&2; return 1; }
  awk '{ printf "%.0f %.0f\n", $1 * 1000, ($2 + $3) * 1000 }' "$work/t"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

write_kernels
printf '%-6s %-10s %10s %10s %9s %9s\n' kernel way wall_ms cpu_ms x_wall x_cpu
for k in cg wmma cub; do
  rm -rf "$work/warm"
  "$cli" compile --no-cache --quiet --arch sm_90 --pch-dir "$work/warm" "$work/$k.cu" > /dev/null  # fills the warm directory
  declare -A wall=() cpu=()
  for way in nvcc nopch cold warm; do
    : > "$work/w.$way"; : > "$work/c.$way"
  done
  for ((i = 0; i < runs; i++)); do
    for way in nvcc nopch cold warm; do
      echo "// candidate $i $way $RANDOM" >> "$work/$k.cu"
      rm -rf "$work/cold"
      case $way in
        nvcc) r=$(timed "$nvcc" -cubin -O3 -arch=sm_90 -o "$work/$k.cubin" "$work/$k.cu") ;;
        nopch) r=$(timed "$cli" compile --no-cache --no-pch --quiet --arch sm_90 "$work/$k.cu") ;;
        cold) r=$(timed "$cli" compile --no-cache --quiet --arch sm_90 --pch-dir "$work/cold" "$work/$k.cu") ;;
        warm) r=$(timed "$cli" compile --no-cache --quiet --arch sm_90 --pch-dir "$work/warm" "$work/$k.cu") ;;
      esac
      echo "${r% *}" >> "$work/w.$way"; echo "${r#* }" >> "$work/c.$way"
    done
  done
  for way in nvcc nopch cold warm; do
    wall[$way]=$(median < "$work/w.$way"); cpu[$way]=$(median < "$work/c.$way")
  done
  for way in nvcc nopch cold warm; do
    awk -v k="$k" -v w="$way" -v a="${wall[$way]}" -v b="${cpu[$way]}" -v na="${wall[nvcc]}" -v nb="${cpu[nvcc]}" \
      'BEGIN { printf "%-6s %-10s %10d %10d %8.2fx %8.2fx\n", k, w, a, b, na / a, nb / b }'
  done
done

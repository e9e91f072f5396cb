// SPDX-License-Identifier: Apache-2.0
// expect-status: ok
// expect-kernels: wmma_gemm
// needs: sibling-includes
// Tensor cores through WMMA: one warp computes one 16x16 tile of C = A * B (fp16 in, fp32 accumulate).
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

extern "C" __global__ void wmma_gemm(const half* a, const half* b, float* c, int m, int n, int k) {
  const int warp_m = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int warp_n = blockIdx.y * blockDim.y + threadIdx.y;
  if (warp_m * 16 >= m || warp_n * 16 >= n) return;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  for (int kk = 0; kk < k; kk += 16) {
    wmma::load_matrix_sync(fa, a + warp_m * 16 * k + kk, k);
    wmma::load_matrix_sync(fb, b + warp_n * 16 * k + kk, k);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(c + warp_m * 16 * n + warp_n * 16, acc, n, wmma::mem_row_major);
}

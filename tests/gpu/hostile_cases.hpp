// SPDX-License-Identifier: Apache-2.0
// The hostile kernels of the GPU suite, each with the one verdict it must get. Shared by the GPU
// suite (tests/gpu/test_hostile.cpp, which runs them) and a CPU test (which compiles them, so a
// case that stops compiling for an unrelated reason is caught on every CI run).
// cases() are candidates for scale_add(const float* x, const float* y, float* out, float alpha,
// int n), grid ceil_div(n, 1024), block 256, four elements per thread; plan_cases() declare their
// own launch plans for row_sum and matmul.
#pragma once

#include <string>
#include <vector>

namespace leap::sandbox::hostile {

struct Case {
  std::string name;
  std::string source;
  std::string expect;        // the one verdict: correct | wrong_answer | runtime_error | timeout | compile_error
  bool timed = false;        // needs the timed phase (its cheat shows only there)
  bool uses_malloc = false;  // its module calls the device heap (the GPU runner is replaced after it)
};

inline std::string scale_add_kernel(const std::string& body, const std::string& before = "",
                                    const std::string& attributes = "") {
  return before + "extern \"C\" __global__ void " + attributes +
         "scale_add(const float* x, const float* y, float* out, float alpha, int n) {\n"
         "  const long long base = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;\n" +
         body + "\n}\n";
}

inline const std::string k_compute =
    "  for (int k = 0; k < 4; ++k) { long long i = base + k; if (i < n) out[i] = alpha * x[i] + y[i]; }\n";

// How many calls the checked phase makes in the suite's task (two size sets, three trials each).
constexpr int k_checked_calls = 6;

inline std::vector<Case> cases() {
  const std::string calls = std::to_string(k_checked_calls);
  // A per-launch call count: block 0's thread 0 adds one when it is done; every block reads it at
  // its start (so a block of call k sees k - 1 or k: either way wrong once the count is reached).
  const std::string counter = "__device__ unsigned int leap_calls;\n";
  const std::string count_at_end =
      "  __syncthreads();\n  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(&leap_calls, 1u);\n";
  return {
      {"oob write far (illegal address)", scale_add_kernel(k_compute + "  if (base == 0) out[1LL << 36] = 1.0f;"),
       "runtime_error"},
      {"oob write just past the end",
       scale_add_kernel(k_compute + "  if (base == 0) { out[n] = 1.0f; out[n + 7] = 2.0f; }"), "wrong_answer"},
      {"oob write before the start", scale_add_kernel(k_compute + "  if (base == 0) out[-3] = 1.0f;"), "wrong_answer"},
      {"spins forever", scale_add_kernel("  volatile int spin = 1; while (spin) {}"), "timeout"},
      {"traps", scale_add_kernel("  if (base == 0) __trap();"), "runtime_error"},
      {"never writes its output", scale_add_kernel(""), "wrong_answer"},
      {"writes its inputs", scale_add_kernel(k_compute + "  if (base < n) const_cast<float*>(x)[base] = 0.0f;"),
       "wrong_answer"},
      {"returns a constant",
       scale_add_kernel("  for (int k = 0; k < 4; ++k) { long long i = base + k; if (i < n) out[i] = 0.5f; }"),
       "wrong_answer"},
      // Device-side launch needs relocatable device code (-rdc), which the sandbox never enables.
      {"launches a kernel from the device",
       "__global__ void child(const float* x, const float* y, float* out, float a, int n) {\n"
       "  int i = blockIdx.x * 256 + threadIdx.x; if (i < n) out[i] = a * x[i] + y[i];\n}\n" +
           scale_add_kernel("  if (base == 0) child<<<(n + 255) / 256, 256>>>(x, y, out, alpha, n);"),
       "compile_error"},
      // Memoisation keyed on (input pointer, first element), per block in __device__ globals: it
      // fooled a harness that timed the last trial's inputs again; fresh inputs per timed run mean
      // it never hits, so it is correct at its honest speed.
      {"memoises in __device__ globals",
       scale_add_kernel("  __shared__ bool hit;\n"
                        "  const unsigned long long key = reinterpret_cast<unsigned long long>(x) ^\n"
                        "      (static_cast<unsigned long long>(__float_as_uint(base < n ? x[base] : 0.0f)) << 20);\n"
                        "  if (threadIdx.x == 0) { hit = leap_memo[blockIdx.x % 65536] == key; leap_memo[blockIdx.x % "
                        "65536] = key; }\n"
                        "  __syncthreads();\n"
                        "  if (hit) return;\n" +
                            k_compute,
                        "__device__ unsigned long long leap_memo[65536];\n"),
       "correct", true},
      {"counts its calls and stops working after the checked ones",
       scale_add_kernel("  if (leap_calls < " + calls + "u) {\n" + k_compute + "  }\n" + count_at_end, counter),
       "wrong_answer", true},
      {"gates on %globaltimer: works for 20 ms after its first call",
       scale_add_kernel("  unsigned long long now;\n  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(now));\n"
                        "  if (blockIdx.x == 0 && threadIdx.x == 0) atomicCAS(&leap_t0, 0ull, now);\n"
                        "  const unsigned long long t0 = leap_t0;\n"
                        "  if (t0 == 0 || now - t0 < 20000000ull) {\n" +
                            k_compute + "  }\n",
                        "__device__ unsigned long long leap_t0;\n"),
       "wrong_answer", true},
      {"gates on clock64 per SM: works for 2e7 cycles after its first run there",
       scale_add_kernel(
           "  unsigned int sm;\n  asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(sm));\n"
           "  const long long now = clock64();\n"
           "  if (threadIdx.x == 0) atomicCAS(&leap_first[sm % 1024], 0ull, static_cast<unsigned long long>(now));\n"
           "  __syncthreads();\n"
           "  if (now - static_cast<long long>(leap_first[sm % 1024]) < 20000000ll) {\n" +
               k_compute + "  }\n",
           "__device__ unsigned long long leap_first[1024];\n"),
       "wrong_answer", true},
      // Skipping work on only some timed runs: a harness that checked a sample of the timed runs
      // paid these whenever the sample missed the skipped ones. Every timed run is checked now.
      {"skips work on one call in seven after the checked ones",
       scale_add_kernel("  const unsigned int call = leap_calls;\n"
                        "  if (call < " +
                            calls + "u || call % 7u != 3u) {\n" + k_compute + "  }\n" + count_at_end,
                        counter),
       "wrong_answer", true},
      {"skips work after the checked ones whenever %globaltimer's bit 16 is set",
       scale_add_kernel("  unsigned long long now;\n  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(now));\n"
                        "  if (leap_calls < " +
                            calls + "u || ((now >> 16) & 1ull) == 0) {\n" + k_compute + "  }\n" + count_at_end,
                        counter),
       "wrong_answer", true},
      {"writes past its buffer only after the checked calls",
       scale_add_kernel(
           k_compute + "  if (base == 0 && leap_calls >= " + calls + "u) out[n + 5] = 1.0f;\n" + count_at_end, counter),
       "wrong_answer", true},
      // Leaks the device heap until malloc fails, and handles the failure: correct. The GPU runner is
      // replaced after it, so the next case's malloc finds a fresh heap.
      {"mallocs without free until the heap is exhausted",
       scale_add_kernel("  if (threadIdx.x == 0) { for (int k = 0; k < 1 << 16; ++k) { void* p = malloc(1 << 20); if "
                        "(p == nullptr) break; "
                        "static_cast<volatile char*>(p)[0] = 1; } }\n" +
                        k_compute),
       "correct", false, true},
      {"needs its malloc to succeed (after the heap exhaustion)",
       scale_add_kernel("  __shared__ float* scratch;\n"
                        "  if (threadIdx.x == 0) scratch = static_cast<float*>(malloc(256 * sizeof(float)));\n"
                        "  __syncthreads();\n"
                        "  if (scratch == nullptr) return;\n"
                        "  scratch[threadIdx.x] = alpha;\n"
                        "  __syncthreads();\n"
                        "  for (int k = 0; k < 4; ++k) { long long i = base + k; if (i < n) out[i] = "
                        "scratch[threadIdx.x] * x[i] + y[i]; }\n"
                        "  __syncthreads();\n"
                        "  if (threadIdx.x == 0) free(scratch);\n"),
       "correct", false, true},
      {"floods printf",
       scale_add_kernel(k_compute + "  for (int k = 0; k < 8; ++k) printf(\"flood %lld %d\\n\", base, k);"), "correct"},
      // A 600 KiB stack frame per thread: ptxas accepts it (checked on the CPU), but it is past the
      // 512 KiB of local memory a thread may have, so loading or launching it fails.
      {"huge per-thread local memory",
       scale_add_kernel("  volatile char big[600 * 1024];\n  for (int k = 0; k < 4; ++k) big[(base + k * 4099) % (600 "
                        "* 1024)] = 1;\n" +
                        k_compute + "  if (base < n) out[base] += big[base % (600 * 1024)] * 0.0f;"),
       "runtime_error"},
      // A grid-wide barrier needs a cooperative launch; the harness never makes one, and the
      // cooperative-groups runtime traps when the grid is not valid.
      {"this_grid().sync() without a cooperative launch",
       scale_add_kernel(k_compute + "  cooperative_groups::this_grid().sync();", "#include <cooperative_groups.h>\n"),
       "runtime_error"},
      // 1024 blocks (and 1 for the small check size) are not multiples of a cluster of 3: the launch fails.
      {"__cluster_dims__ that does not divide the grid", scale_add_kernel(k_compute, "", "__cluster_dims__(3, 1, 1) "),
       "runtime_error"},
  };
}

// Launch plans (`// leap-launch:` lines) on the built-in tasks that accept them: a two-kernel row
// sum through scratch and its broken twins, plans that break a rule (refused before any launch),
// and a matmul that opts in to 64 KiB of dynamic shared memory.
struct PlanCase {
  std::string name;
  std::string task;
  std::string source;
  std::string expect;
  bool timed = false;
};

inline const std::string k_row_plan =
    "// leap-scratch: partials float32 rows * ceil_div(cols, 1024)\n"
    "// leap-launch: row_chunk_sums grid=(ceil_div(cols, 1024), rows) block=256 args=(x, partials, rows, cols)\n"
    "// leap-launch: row_chunk_total grid=rows block=32 args=(partials, out, rows, cols)\n";

// row_sum in two kernels: 1024-column chunks into scratch, then one warp per row. `store_if` decides
// which chunks are stored; `after` runs once in the last block (a write past the scratch).
inline std::string row_chunks(const std::string& store_if = "true", const std::string& after = "") {
  return "extern \"C\" __global__ void row_chunk_sums(const float* x, float* partials, int rows, int cols) {\n"
         "  __shared__ float part[256];\n"
         "  const int chunk = blockIdx.x, row = blockIdx.y, chunks = (cols + 1023) / 1024;\n"
         "  const float* p = x + static_cast<long long>(row) * cols;\n"
         "  const int end = (chunk + 1) * 1024 < cols ? (chunk + 1) * 1024 : cols;\n"
         "  float s = 0.0f;\n"
         "  for (int c = chunk * 1024 + threadIdx.x; c < end; c += blockDim.x) s += p[c];\n"
         "  part[threadIdx.x] = s;\n"
         "  __syncthreads();\n"
         "  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {\n"
         "    if (threadIdx.x < stride) part[threadIdx.x] += part[threadIdx.x + stride];\n"
         "    __syncthreads();\n"
         "  }\n"
         "  if (threadIdx.x == 0 && (" +
         store_if +
         ")) partials[static_cast<long long>(row) * chunks + chunk] = part[0];\n"
         "  if (threadIdx.x == 0 && row == rows - 1 && chunk == chunks - 1) {" +
         after +
         "}\n"
         "}\n"
         "extern \"C\" __global__ void row_chunk_total(const float* partials, float* out, int rows, int cols) {\n"
         "  const int row = blockIdx.x, chunks = (cols + 1023) / 1024;\n"
         "  float s = 0.0f;\n"
         "  for (int c = threadIdx.x; c < chunks; c += 32) s += partials[static_cast<long long>(row) * chunks + c];\n"
         "  for (int offset = 16; offset > 0; offset /= 2) s += __shfl_down_sync(0xffffffffu, s, offset);\n"
         "  if (threadIdx.x == 0 && row < rows) out[row] = s;\n"
         "}\n";
}

inline std::vector<PlanCase> plan_cases() {
  auto plan_with = [](const std::string& from, const std::string& to) {
    std::string p = k_row_plan;
    p.replace(p.find(from), from.size(), to);
    return p;
  };
  return {
      {"plan: two kernels through scratch", "row_sum", k_row_plan + row_chunks(), "correct", true},
      // Chunk 1 is never stored: the second kernel adds the scratch's poison (NaN), never a stale sum.
      {"plan: the second kernel reads scratch the first never wrote", "row_sum", k_row_plan + row_chunks("chunk != 1"),
       "wrong_answer"},
      {"plan: writes one element past its scratch", "row_sum",
       k_row_plan + row_chunks("true", " partials[static_cast<long long>(rows) * chunks] = 1.0f; "), "wrong_answer"},
      {"plan: names a kernel the module lacks", "row_sum",
       plan_with("row_chunk_total grid", "row_chunk_totals grid") + row_chunks(), "compile_error"},
      {"plan: 2048 threads per block", "row_sum",
       plan_with("grid=rows block=32", "grid=rows block=(32, 64)") + row_chunks(), "compile_error"},
      {"plan: more dynamic shared memory than the task allows", "row_sum",
       plan_with("block=256 args", "block=256 shared=64 * 1024 args") + row_chunks(), "compile_error"},
      {"plan: 64 KiB of dynamic shared memory, opted in", "matmul",
       "// leap-launch: matmul grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16) shared=64 * 1024\n"
       "extern \"C\" __global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {\n"
       "  extern __shared__ float pad[];  // 256 threads x 64 floats: every byte of the 64 KiB\n"
       "  const int t = threadIdx.y * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + "
       "threadIdx.x;\n"
       "  pad[t * 64 + 63] = 0.0f;\n"
       "  __syncthreads();\n"
       "  if (row >= M || col >= N) return;\n"
       "  float s = pad[t * 64 + 63];\n"
       "  for (int k = 0; k < K; ++k) s += A[static_cast<long long>(row) * K + k] * B[static_cast<long long>(k) * N + "
       "col];\n"
       "  C[static_cast<long long>(row) * N + col] = s;\n"
       "}\n",
       "correct"},
  };
}

}  // namespace leap::sandbox::hostile

// SPDX-License-Identifier: Apache-2.0
// Compile latency and throughput of leap::sandbox against nvcc. Run:
//   cmake --build build/<dir> --target bench_compile && build/<dir>/benchmarks/bench_compile
// The cold case is the first compile in this process, so keep it first (don't filter it away when
// comparing). nvcc and CLI cases are skipped when the program is not found.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <leap/sandbox/sandbox.hpp>
#include <string>
#include <vector>

namespace sb = leap::sandbox;

namespace {

const char* k_kernel =
    "extern \"C\" __global__ void saxpy(float* y, const float* x, float a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = a * x[i] + y[i];\n"
    "}\n";

std::atomic<int> g_unique{0};

sb::CompileJob job(const std::string& salt = "") {
  sb::CompileJob j;
  j.source = std::string(k_kernel) + salt;
  return j;
}

// A different source every call, so neither NVRTC nor any cache can reuse work.
std::string fresh_salt() { return "// " + std::to_string(::getpid()) + "-" + std::to_string(g_unique++) + "\n"; }

sb::CompilerConfig config(sb::Isolation iso, unsigned workers = 1, std::shared_ptr<sb::CompileCache> cache = {}) {
  sb::CompilerConfig c;
  c.isolation = iso;
  c.workers = workers;
  c.cache = std::move(cache);
  return c;
}

const std::filesystem::path& work_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("leap-bench-compile-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::ofstream(d / "saxpy.cu") << k_kernel;
    return d;
  }();
  return dir;
}

std::string find_nvcc() {
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (std::size_t s = 0, e; s <= p.size(); s = e + 1) {
      e = p.find(':', s);
      if (e == std::string::npos) e = p.size();
      const std::filesystem::path cand = std::filesystem::path(p.substr(s, e - s)) / "nvcc";
      if (::access(cand.c_str(), X_OK) == 0) return cand.string();
    }
  }
  return ::access("/usr/local/cuda/bin/nvcc", X_OK) == 0 ? "/usr/local/cuda/bin/nvcc" : "";
}

void run_command(benchmark::State& state, const std::string& cmd) {
  for (auto _ : state) {
    if (std::system(cmd.c_str()) != 0) {
      state.SkipWithError(("command failed: " + cmd).c_str());
      break;
    }
  }
}

void BM_ColdFirstCompileInProcess(benchmark::State& state) {
  for (auto _ : state) {
    sb::Compiler c(config(sb::Isolation::trusted_in_process));
    benchmark::DoNotOptimize(c.compile(job(fresh_salt())));
  }
}
BENCHMARK(BM_ColdFirstCompileInProcess)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_WarmInProcess(benchmark::State& state) {
  sb::Compiler c(config(sb::Isolation::trusted_in_process));
  for (auto _ : state) benchmark::DoNotOptimize(c.compile(job(fresh_salt())));
}
BENCHMARK(BM_WarmInProcess)->Unit(benchmark::kMillisecond)->UseRealTime();

// A forked, watchdogged child per compile (the default), confined by the OS (Landlock, seccomp, the
// private root, rlimits) or with --unconfined: every compile is a fresh child, so each one pays the
// confinement's set-up; the two side by side are its cost. Compare with
//   --benchmark_filter=BM_Isolated --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
void BM_Isolated(benchmark::State& state) {
  sb::CompilerConfig cfg = config(sb::Isolation::process);
  cfg.unconfined = state.range(0) == 0;
  sb::Compiler c(cfg);
  for (auto _ : state) benchmark::DoNotOptimize(c.compile(job(fresh_salt())));
}
BENCHMARK(BM_Isolated)->ArgName("confined")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

// The first compile of a fresh Compiler in a child, confined or not: the set-up a new Compiler adds
// (the confinement probe is once per process, so it is paid before the loop).
void BM_ColdFirstCompileChild(benchmark::State& state) {
  (void)sb::confinement_support();
  for (auto _ : state) {
    sb::CompilerConfig cfg = config(sb::Isolation::process);
    cfg.unconfined = state.range(0) == 0;
    sb::Compiler c(cfg);
    benchmark::DoNotOptimize(c.compile(job(fresh_salt())));
  }
}
BENCHMARK(BM_ColdFirstCompileChild)->ArgName("confined")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

void BM_CacheHitMemory(benchmark::State& state) {
  sb::Compiler c(config(sb::Isolation::trusted_in_process, 1, std::make_shared<sb::CompileCache>()));
  const sb::CompileJob j = job();
  (void)c.compile(j);
  for (auto _ : state) {
    const sb::CompileResult r = c.compile(j);
    if (!r.cache_hit) state.SkipWithError("expected a cache hit");
  }
}
BENCHMARK(BM_CacheHitMemory)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_CacheHitDisk(benchmark::State& state) {
  sb::CacheOptions o;
  o.memory_bytes = 0;  // every lookup reads, checks and decodes the file
  o.directory = work_dir() / "cache";
  sb::Compiler c(config(sb::Isolation::trusted_in_process, 1, std::make_shared<sb::CompileCache>(o)));
  const sb::CompileJob j = job();
  (void)c.compile(j);
  for (auto _ : state) {
    const sb::CompileResult r = c.compile(j);
    if (!r.cache_hit) state.SkipWithError("expected a cache hit");
  }
}
BENCHMARK(BM_CacheHitDisk)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_NvccCubinProcess(benchmark::State& state) {
  const std::string nvcc = find_nvcc();
  if (nvcc.empty()) {
    state.SkipWithError("nvcc not found on PATH or in /usr/local/cuda/bin");
    return;
  }
  run_command(state, "'" + nvcc + "' -cubin -arch=sm_90 -o '" + (work_dir() / "saxpy.cubin").string() + "' '" +
                         (work_dir() / "saxpy.cu").string() + "'");
}
BENCHMARK(BM_NvccCubinProcess)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);

// Real kernels, warm (the Compiler already made one compile, so the figure is the kernel's own cost):
// cuda_fp16 with a CUB block reduction, and a WMMA tile GEMM; each beside nvcc -cubin on the same file.
const char* k_fp16_cub =
    "#include <cuda_fp16.h>\n#include <cub/block/block_reduce.cuh>\n"
    "extern \"C\" __global__ void block_sum_half(const __half* x, float* out, int n) {\n"
    "  using Reduce = cub::BlockReduce<float, 256>;\n  __shared__ typename Reduce::TempStorage storage;\n"
    "  float v = 0.f;\n  for (int i = blockIdx.x * 256 + threadIdx.x; i < n; i += 256 * gridDim.x) v += __half2float(x[i]);\n"
    "  const float total = Reduce(storage).Sum(v);\n  if (threadIdx.x == 0) atomicAdd(out, total);\n}\n";
const char* k_wmma =
    "#include <mma.h>\n#include <cuda_fp16.h>\nusing namespace nvcuda;\n"
    "extern \"C\" __global__ void wmma_gemm(const half* a, const half* b, float* c, int m, int n, int k) {\n"
    "  const int wm = (blockIdx.x * blockDim.x + threadIdx.x) / 32, wn = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "  if (wm * 16 >= m || wn * 16 >= n) return;\n"
    "  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;\n"
    "  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;\n"
    "  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;\n  wmma::fill_fragment(acc, 0.0f);\n"
    "  for (int kk = 0; kk < k; kk += 16) {\n    wmma::load_matrix_sync(fa, a + wm * 16 * k + kk, k);\n"
    "    wmma::load_matrix_sync(fb, b + wn * 16 * k + kk, k);\n    wmma::mma_sync(acc, fa, fb, acc);\n  }\n"
    "  wmma::store_matrix_sync(c + wm * 16 * n + wn * 16, acc, n, wmma::mem_row_major);\n}\n";

void BM_WarmRealKernel(benchmark::State& state, const char* source) {
  sb::Compiler c(config(sb::Isolation::trusted_in_process));
  (void)c.compile(job(fresh_salt()));
  sb::CompileJob j;
  j.options.timeout = std::chrono::minutes(2);
  for (auto _ : state) {
    j.source = std::string(source) + fresh_salt();
    const sb::CompileResult r = c.compile(j);
    if (!r.ok()) {
      state.SkipWithError(("does not compile here: " + r.log.substr(0, 200)).c_str());
      break;
    }
  }
}
BENCHMARK_CAPTURE(BM_WarmRealKernel, fp16_cub_block_reduce, k_fp16_cub)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(5.0);
BENCHMARK_CAPTURE(BM_WarmRealKernel, wmma_gemm, k_wmma)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(5.0);

void BM_NvccRealKernel(benchmark::State& state, const char* name, const char* source) {
  const std::string nvcc = find_nvcc();
  if (nvcc.empty()) {
    state.SkipWithError("nvcc not found on PATH or in /usr/local/cuda/bin");
    return;
  }
  const std::filesystem::path file = work_dir() / (std::string(name) + ".cu");
  std::ofstream(file) << source;
  run_command(state, "'" + nvcc + "' -cubin -arch=sm_90 -o '" + (work_dir() / (std::string(name) + ".cubin")).string() +
                         "' '" + file.string() + "'");
}
BENCHMARK_CAPTURE(BM_NvccRealKernel, fp16_cub_block_reduce, "fp16_cub", k_fp16_cub)
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(5.0);
BENCHMARK_CAPTURE(BM_NvccRealKernel, wmma_gemm, "wmma", k_wmma)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(5.0);

#ifdef LEAP_SANDBOX_CLI
void BM_CliCompileProcess(benchmark::State& state) {  // the whole leap-sandbox process, no cache
  run_command(state, std::string("'") + LEAP_SANDBOX_CLI + "' compile --no-cache --quiet '" +
                         (work_dir() / "saxpy.cu").string() + "' > /dev/null");
}
BENCHMARK(BM_CliCompileProcess)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
#endif

// Throughput: a batch of 8 distinct kernels with 1 or 2 workers; items/s is the figure to compare.
void BM_BatchThroughput(benchmark::State& state) {
  const auto iso = state.range(1) == 0 ? sb::Isolation::trusted_in_process : sb::Isolation::process;
  sb::Compiler c(config(iso, static_cast<unsigned>(state.range(0))));
  (void)c.compile(job(fresh_salt()));
  for (auto _ : state) {
    std::vector<sb::CompileJob> jobs;
    for (int i = 0; i < 8; ++i) jobs.push_back(job(fresh_salt()));
    benchmark::DoNotOptimize(c.compile_batch(jobs));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 8);
}
BENCHMARK(BM_BatchThroughput)
    ->ArgNames({"workers", "isolated"})
    ->Args({1, 0})->Args({2, 0})->Args({1, 1})->Args({2, 1})
    ->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(3.0);

}  // namespace

// SPDX-License-Identifier: Apache-2.0
// Compile latency and throughput of leap::sandbox against nvcc. Run:
//   cmake --build build/<dir> --target bench_compile && build/<dir>/benchmarks/bench_compile
// The cold case is the first compile in this process, so keep it first (don't filter it away when
// comparing). nvcc and CLI cases are skipped when the program is not found. The heavy-header figures
// and their ratios to nvcc (printed at the end):
//   bench_compile --benchmark_filter='Heavy|CubinProcess|CliCompile' --benchmark_repetitions=3
// One-shot on a warm disk against nvcc, for a kernel under a licence block and a comment:
//   bench_compile --benchmark_filter='Heavy(Nvcc|CliWarmDisk)/cg_reduce' --benchmark_repetitions=5
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <leap/sandbox/sandbox.hpp>
#include <string>
#include <vector>

#include "confinement/confinement.hpp"  // confinement_support(), internal

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

sb::CompilerConfig config(sb::Isolation iso, unsigned parallel_compiles = 1,
                          std::shared_ptr<sb::CompileCache> cache = {}) {
  sb::CompilerConfig c;
  c.isolation = iso;
  c.parallel_compiles = parallel_compiles;
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

// Runs `cmd` once per iteration; `prepare`, when given, runs first each time, untimed (a new candidate).
void run_command(benchmark::State& state, const std::string& cmd, const std::function<void()>& prepare = {}) {
  for (auto _ : state) {
    if (prepare) {
      state.PauseTiming();
      prepare();
      state.ResumeTiming();
    }
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
BENCHMARK(BM_ColdFirstCompileChild)
    ->ArgName("confined")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(2.0);

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

// Heavy-header kernels: most of their compile is the headers (cuda_fp16.h and CUB, mma.h, cooperative
// groups, and cooperative groups under a licence block). Each is measured side by side with `nvcc -cubin` on the same
// source, in five ways:
//   nvcc        nvcc -cubin -arch=sm_90, a whole process
//   cli         a whole `leap-sandbox compile --no-cache` process (cold: nothing kept between runs)
//   child       a fresh confined child per compile (Isolation::process: no PCH)
//   pool_first  the first compile of a fresh pooled compiler (confinement, NVRTC start, the PCH made)
//   pool_warm   a pooled compiler with the PCH of the kernel's headers, as serve runs
// Every iteration compiles a new candidate (a distinct line after the includes), with no cache, so
// neither NVRTC nor a cache can reuse the compile itself; only the PCH of the shared headers is
// reused, which is the point. main() prints each way as a ratio to nvcc.
const char* k_fp16_cub =
    "#include <cuda_fp16.h>\n#include <cub/block/block_reduce.cuh>\n"
    "extern \"C\" __global__ void block_sum_half(const __half* x, float* out, int n) {\n"
    "  using Reduce = cub::BlockReduce<float, 256>;\n  __shared__ typename Reduce::TempStorage storage;\n"
    "  float v = 0.f;\n  for (int i = blockIdx.x * 256 + threadIdx.x; i < n; i += 256 * gridDim.x) v += "
    "__half2float(x[i]);\n"
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
const char* k_cg_reduce =
    "#include <cooperative_groups.h>\n#include <cooperative_groups/reduce.h>\nnamespace cg = cooperative_groups;\n"
    "extern \"C\" __global__ void cg_sum(const float* x, float* out, int n) {\n"
    "  cg::thread_block block = cg::this_thread_block();\n"
    "  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);\n"
    "  float v = 0.f;\n  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += "
    "x[i];\n"
    "  v = cg::reduce(warp, v, cg::plus<float>());\n  if (warp.thread_rank() == 0) atomicAdd(out, v);\n}\n";

// The cooperative-groups kernel as real files and model completions come: NVIDIA's samples' licence
// block and a comment line before the includes. Its stored PCH is the bare kernel's (the leading
// includes are read as the preprocessor reads them), so its warm-disk figure should match cg_reduce's.
const std::string k_cg_reduce_licensed =
    "/* Copyright (c) 2022, NVIDIA CORPORATION. All rights reserved.\n"
    " *\n"
    " * Redistribution and use in source and binary forms, with or without\n"
    " * modification, are permitted provided that the following conditions\n"
    " * are met:\n"
    " *  * Redistributions of source code must retain the above copyright\n"
    " *    notice, this list of conditions and the following disclaimer.\n"
    " *  * Redistributions in binary form must reproduce the above copyright\n"
    " *    notice, this list of conditions and the following disclaimer in the\n"
    " *    documentation and/or other materials provided with the distribution.\n"
    " *  * Neither the name of NVIDIA CORPORATION nor the names of its\n"
    " *    contributors may be used to endorse or promote products derived\n"
    " *    from this software without specific prior written permission.\n"
    " *\n"
    " * THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS ``AS IS'' AND ANY\n"
    " * EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE\n"
    " * IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR\n"
    " * PURPOSE ARE DISCLAIMED.  IN NO EVENT SHALL THE COPYRIGHT OWNER OR\n"
    " * CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL,\n"
    " * EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED TO,\n"
    " * PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR\n"
    " * PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY\n"
    " * OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT\n"
    " * (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE\n"
    " * OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.\n"
    " */\n"
    "\n"
    "// Sums an array: each warp reduces its elements with cooperative groups, then one atomic per warp.\n" +
    std::string(k_cg_reduce);

struct HeavyKernel {
  const char* name;
  const char* source;
};
const HeavyKernel k_heavy[] = {{"fp16_cub_block_reduce", k_fp16_cub},
                               {"wmma_gemm", k_wmma},
                               {"cg_reduce", k_cg_reduce},
                               {"cg_reduce_licensed", k_cg_reduce_licensed.c_str()}};

// A new candidate with the kernel's headers: the source and a line of its own after it.
std::string heavy_candidate(const HeavyKernel& k) { return std::string(k.source) + "// candidate " + fresh_salt(); }

std::filesystem::path write_candidate(const HeavyKernel& k) {
  const std::filesystem::path file = work_dir() / (std::string(k.name) + ".cu");
  std::ofstream(file) << heavy_candidate(k);
  return file;
}

sb::CompileJob heavy_job(const HeavyKernel& k) {
  sb::CompileJob j;
  j.source = heavy_candidate(k);
  j.options.timeout = std::chrono::minutes(2);
  return j;
}

bool compiled(benchmark::State& state, const sb::CompileResult& r) {
  if (r.ok()) return true;
  state.SkipWithError(("does not compile here: " + r.log.substr(0, 200)).c_str());
  return false;
}

void BM_HeavyNvcc(benchmark::State& state, const HeavyKernel& k) {
  const std::string nvcc = find_nvcc();
  if (nvcc.empty()) {
    state.SkipWithError("nvcc not found on PATH or in /usr/local/cuda/bin");
    return;
  }
  const std::filesystem::path file = write_candidate(k);
  run_command(state,
              "'" + nvcc + "' -cubin -arch=sm_90 -o '" + (work_dir() / (std::string(k.name) + ".cubin")).string() +
                  "' '" + file.string() + "'",
              [&] { write_candidate(k); });
}

void BM_HeavyCli(benchmark::State& state, [[maybe_unused]] const HeavyKernel& k) {
#ifdef LEAP_SANDBOX_CLI
  const std::filesystem::path file = write_candidate(k);
  run_command(state,
              std::string("'") + LEAP_SANDBOX_CLI + "' compile --no-cache --no-pch --quiet --arch sm_90 '" +
                  file.string() + "' > /dev/null",
              [&] { write_candidate(k); });
#else
  state.SkipWithError("built without the leap-sandbox program");
#endif
}

// The CLI with precompiled headers kept on disk (--pch-dir). Cold disk: an empty PCH directory each
// time, so the process makes the PCH of the kernel's #include lines (in a confined pooled compiler of its
// own) and then compiles with it. Warm disk: the PCH is already there, made by an earlier process.
void BM_HeavyCliColdDisk(benchmark::State& state, [[maybe_unused]] const HeavyKernel& k) {
#ifdef LEAP_SANDBOX_CLI
  const std::filesystem::path file = write_candidate(k);
  const std::filesystem::path dir = work_dir() / (std::string("pch-cold-") + k.name);
  run_command(state,
              std::string("'") + LEAP_SANDBOX_CLI + "' compile --no-cache --pch-dir '" + dir.string() +
                  "' --quiet --arch sm_90 '" + file.string() + "' > /dev/null",
              [&] {
                std::filesystem::remove_all(dir);
                write_candidate(k);
              });
#else
  state.SkipWithError("built without the leap-sandbox program");
#endif
}

std::filesystem::path warm_pch_dir() { return work_dir() / "pch-warm"; }

void BM_HeavyCliWarmDisk(benchmark::State& state, [[maybe_unused]] const HeavyKernel& k) {
#ifdef LEAP_SANDBOX_CLI
  const std::filesystem::path file = write_candidate(k);
  const std::string cmd = std::string("'") + LEAP_SANDBOX_CLI + "' compile --no-cache --pch-dir '" +
                          warm_pch_dir().string() + "' --quiet --arch sm_90 '" + file.string() + "' > /dev/null";
  if (std::system(cmd.c_str()) != 0) {  // an earlier process makes the PCH, untimed
    state.SkipWithError("the warm-up compile failed");
    return;
  }
  run_command(state, cmd, [&] { write_candidate(k); });
#else
  state.SkipWithError("built without the leap-sandbox program");
#endif
}

void BM_HeavyChild(benchmark::State& state, const HeavyKernel& k) {
  sb::Compiler c(config(sb::Isolation::process));
  for (auto _ : state) {
    if (!compiled(state, c.compile(heavy_job(k)))) break;
  }
}

sb::CompilerConfig pool_config() {
  sb::CompilerConfig c = config(sb::Isolation::pooled);
  c.pool.size = 1;
  return c;
}

void BM_HeavyPoolFirst(benchmark::State& state, const HeavyKernel& k) {
  (void)sb::confinement_support();  // probed once per process, not per Compiler
  std::size_t created = 0;
  for (auto _ : state) {
    sb::Compiler c(pool_config());
    const sb::CompileResult r = c.compile(heavy_job(k));
    if (!compiled(state, r)) break;
    created += r.pch == sb::PchUse::created ? 1 : 0;
  }
  state.counters["pch_created_rate"] =
      static_cast<double>(created) / static_cast<double>(std::max<std::int64_t>(state.iterations(), 1));
}

// The first compile of a fresh pooled compiler (a new serve or fleet worker) when the PCH is on disk.
void BM_HeavyPoolFirstWarmDisk(benchmark::State& state, const HeavyKernel& k) {
  (void)sb::confinement_support();
  sb::CompilerConfig cfg = pool_config();
  cfg.pch_directory = warm_pch_dir();
  {
    sb::Compiler warm_up(cfg);  // makes the PCH if no earlier case did, untimed
    if (!compiled(state, warm_up.compile(heavy_job(k)))) return;
  }
  std::size_t hits = 0;
  for (auto _ : state) {
    sb::Compiler c(cfg);
    const sb::CompileResult r = c.compile(heavy_job(k));
    if (!compiled(state, r)) break;
    hits += r.pch == sb::PchUse::hit ? 1 : 0;
  }
  state.counters["pch_hit_rate"] =
      static_cast<double>(hits) / static_cast<double>(std::max<std::int64_t>(state.iterations(), 1));
}

void BM_HeavyPoolWarm(benchmark::State& state, const HeavyKernel& k) {
  sb::Compiler c(pool_config());
  if (!compiled(state, c.compile(heavy_job(k)))) return;  // the pooled compiler's first candidate makes the PCH
  std::size_t hits = 0;
  for (auto _ : state) {
    const sb::CompileResult r = c.compile(heavy_job(k));
    if (!compiled(state, r)) break;
    hits += r.pch == sb::PchUse::hit ? 1 : 0;
  }
  state.counters["pch_hit_rate"] =
      static_cast<double>(hits) / static_cast<double>(std::max<std::int64_t>(state.iterations(), 1));
}

#ifdef LEAP_SANDBOX_CLI
void BM_CliCompileProcess(benchmark::State& state) {  // the whole leap-sandbox process, no cache
  run_command(state, std::string("'") + LEAP_SANDBOX_CLI + "' compile --no-cache --quiet '" +
                         (work_dir() / "saxpy.cu").string() + "' > /dev/null");
}
BENCHMARK(BM_CliCompileProcess)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(2.0);
#endif

// Throughput: a batch of 8 distinct kernels with 1 or 2 parallel compiles; items/s is the figure to compare.
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
    ->ArgNames({"parallel", "isolated"})
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(3.0);

// Records every run's time per iteration, so main() can print the ratios of one run side by side.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  RatioReporter() : ConsoleReporter(::isatty(STDOUT_FILENO) != 0 ? OO_Defaults : OO_Tabular) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred || r.iterations == 0) continue;
      seconds_[r.run_name.function_name + (r.run_name.args.empty() ? "" : "/" + r.run_name.args)].push_back(
          r.real_accumulated_time / static_cast<double>(r.iterations));
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // The median over repetitions, or nothing.
  std::optional<double> median(const std::string& name) const {
    const auto it = seconds_.find(name);
    if (it == seconds_.end() || it->second.empty()) return std::nullopt;
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  }

 private:
  std::map<std::string, std::vector<double>> seconds_;
};

void print_ratios(const RatioReporter& rep) {
  std::printf(
      "\nSide by side in this run (median per compile; ratio = nvcc -cubin time / this time, higher is faster):\n");
  auto line = [&](const std::string& label, const std::string& name, std::optional<double> nvcc) {
    const std::optional<double> t = rep.median(name);
    if (!t) return;
    std::printf("  %-44s %9.1f ms", label.c_str(), *t * 1e3);
    if (nvcc) std::printf("   %6.2fx", *nvcc / *t);
    std::printf("\n");
  };
  for (const HeavyKernel& k : k_heavy) {
    const std::string tag = std::string("/") + k.name;
    const std::optional<double> nvcc = rep.median("BM_HeavyNvcc" + tag);
    std::printf(" %s\n", k.name);
    line("nvcc -cubin (process)", "BM_HeavyNvcc" + tag, std::nullopt);
    line("leap-sandbox compile --no-pch (process)", "BM_HeavyCli" + tag, nvcc);
    line("leap-sandbox compile, cold disk (process)", "BM_HeavyCliColdDisk" + tag, nvcc);
    line("leap-sandbox compile, warm disk (process)", "BM_HeavyCliWarmDisk" + tag, nvcc);
    line("confined child per compile (no PCH)", "BM_HeavyChild" + tag, nvcc);
    line("fresh pooled compiler (PCH created)", "BM_HeavyPoolFirst" + tag, nvcc);
    line("fresh pooled compiler, warm disk", "BM_HeavyPoolFirstWarmDisk" + tag, nvcc);
    line("warm pooled compiler (PCH hit, as serve)", "BM_HeavyPoolWarm" + tag, nvcc);
  }
  const std::optional<double> nvcc = rep.median("BM_NvccCubinProcess");
  std::printf(" saxpy (the benchmark kernel)\n");
  line("nvcc -cubin (process)", "BM_NvccCubinProcess", std::nullopt);
  line("leap-sandbox compile --no-cache (process)", "BM_CliCompileProcess", nvcc);
}

}  // namespace

int main(int argc, char** argv) {
  // The heavy-header group, kernel by kernel, each way beside nvcc on the same source.
  for (const HeavyKernel& k : k_heavy) {
    const std::string tag = std::string("/") + k.name;
    for (auto [name, fn] :
         {std::pair{"BM_HeavyNvcc", &BM_HeavyNvcc}, std::pair{"BM_HeavyCli", &BM_HeavyCli},
          std::pair{"BM_HeavyCliColdDisk", &BM_HeavyCliColdDisk},
          std::pair{"BM_HeavyCliWarmDisk", &BM_HeavyCliWarmDisk}, std::pair{"BM_HeavyChild", &BM_HeavyChild},
          std::pair{"BM_HeavyPoolFirst", &BM_HeavyPoolFirst},
          std::pair{"BM_HeavyPoolFirstWarmDisk", &BM_HeavyPoolFirstWarmDisk},
          std::pair{"BM_HeavyPoolWarm", &BM_HeavyPoolWarm}}) {
      benchmark::RegisterBenchmark((std::string(name) + tag).c_str(), fn, k)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->MinTime(std::string(name) == "BM_HeavyPoolWarm" ? 3.0 : 1.0);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  print_ratios(reporter);
  return 0;
}

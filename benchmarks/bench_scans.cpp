// SPDX-License-Identifier: Apache-2.0
// The sandbox's scans of candidate text, each on the adversarial input that once made it quadratic,
// at several sizes: the advice scanner (templates left in an #if 0), the device-malloc scan of the
// PTX (`.extern .func` planted in an inline-asm comment), the log filter (a log of #warning lines
// that say "cannot open source file"), and the include jail (a job of many shipped headers). A linear
// scan keeps its bytes per second as the input grows. Run:
//   cmake --build build/default --target bench_scans && build/default/benchmarks/bench_scans
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compile/compile_child.hpp"
#include "compile/include_jail.hpp"
#include "compile/kernel_diagnostics.hpp"
#include "evaluation/runner_reply.hpp"

namespace sb = leap::sandbox;

namespace {

std::string repeated(std::string head, std::string_view unit, std::size_t bytes, std::string_view tail = {}) {
  while (head.size() < bytes) head += unit;
  return head + std::string(tail);
}

void report(benchmark::State& state, std::size_t bytes) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  state.counters["input_bytes"] = static_cast<double>(bytes);
}

void BM_AdviceScan(benchmark::State& state) {
  const std::string source =
      repeated("#if 0\n", "template<typename T>\n", static_cast<std::size_t>(state.range(0)) << 10, "#endif\n");
  for (auto _ : state) benchmark::DoNotOptimize(sb::missing_kernel_advice(source, "kernel.cu", {}));
  report(state, source.size());
}
BENCHMARK(BM_AdviceScan)->ArgName("KiB")->Arg(60)->Arg(240)->Arg(4096)->Unit(benchmark::kMillisecond);

void BM_DeviceMallocScan(benchmark::State& state) {
  const std::string ptx = repeated(".visible .entry k()\n{\n\t// begin inline asm\n\t//", " .extern .func",
                                   static_cast<std::size_t>(state.range(0)) << 10,
                                   "\n\t// end inline asm\n\tret;\n}\n.extern .func  (.param .b64 func_retval0) "
                                   "my_malloc\n(\n\t.param .b64 p\n)\n;\n");
  for (auto _ : state) benchmark::DoNotOptimize(sb::detail::references_device_malloc(ptx));
  report(state, ptx.size());
}
BENCHMARK(BM_DeviceMallocScan)->ArgName("KiB")->Arg(60)->Arg(240)->Arg(4096)->Unit(benchmark::kMillisecond);

void BM_LogFilter(benchmark::State& state) {
  const std::string log =
      repeated("", "k.cu(7): warning #1105-D: #warning directive: cannot open source file \"x\": y\n",
               static_cast<std::size_t>(state.range(0)) << 10);
  for (auto _ : state) benchmark::DoNotOptimize(sb::detail::same_words_for_every_unopenable_file(log));
  report(state, log.size());
}
BENCHMARK(BM_LogFilter)->ArgName("KiB")->Arg(240)->Arg(960)->Arg(4096)->Unit(benchmark::kMillisecond);

void BM_IncludeJailHeaders(benchmark::State& state) {
  sb::CompileJob job;
  for (std::int64_t i = 0; i < state.range(0); ++i) {
    const std::string name = "h" + std::to_string(i) + ".cuh";
    job.headers.push_back({name, ""});
    job.source += "#include \"" + name + "\"\n";
  }
  for (auto _ : state) benchmark::DoNotOptimize(sb::check_job(job, sb::IncludePolicy::none()));
  report(state, job.source.size());
  state.counters["headers"] = static_cast<double>(state.range(0));
}
BENCHMARK(BM_IncludeJailHeaders)->ArgName("headers")->Arg(5000)->Arg(20000)->Arg(200000)->Unit(benchmark::kMillisecond);

}  // namespace

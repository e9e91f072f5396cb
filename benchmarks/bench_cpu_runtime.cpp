// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's costs: a thread that never waits (lazy fibers: no switch), a fiber switch, a
// __syncthreads (one switch per thread of the block), a warp shuffle (one per lane). Run:
//   cmake --build build/<dir> --target bench_cpu_runtime && build/<dir>/benchmarks/bench_cpu_runtime
// Counters: per_thread, per_barrier, per_shuffle and per_switch are seconds each (Google Benchmark
// prints them as time), from the launch's own count of switches. docs/cpu-runtime.md quotes a run.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "leap/cpu_runtime/launch.hpp"
#include "leap/cpu_runtime/module.hpp"

namespace rt = leap::cpu_runtime;

namespace {

const rt::Module& kernels() {
  static const rt::Module m = rt::Module::load(LEAP_BENCH_CPU_RUNTIME_MODULE);
  return m;
}

rt::Schedule schedule_of(int which) { return which == 0 ? rt::Schedule::in_order() : rt::Schedule::random(1); }

rt::LaunchResult launch(const char* name, unsigned blocks, unsigned threads, int rounds, int which,
                        std::vector<int>& out) {
  int* p = out.data();
  std::vector<rt::Argument> args{rt::Argument::of(p)};
  if (rounds > 0) args.push_back(rt::Argument::of(rounds));
  rt::LaunchResult r = rt::launch(kernels().kernel(name), {blocks}, {threads}, 0, args, schedule_of(which));
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.message.c_str());
    std::abort();
  }
  return r;
}

void set_per(benchmark::State& state, const char* name, double count) {
  state.counters[name] = benchmark::Counter(count, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// Args: threads per block, schedule (0 in order, 1 random).
void BM_thread_no_wait(benchmark::State& state) {
  const auto threads = static_cast<unsigned>(state.range(0));
  const unsigned blocks = 64;
  std::vector<int> out(blocks * threads);
  std::uint64_t switches = 0;
  for (auto _ : state)
    switches += launch("no_wait", blocks, threads, 0, static_cast<int>(state.range(1)), out).stats.switches;
  set_per(state, "per_thread", static_cast<double>(state.iterations()) * blocks * threads);
  set_per(state, "per_switch", static_cast<double>(switches));
}

void BM_syncthreads(benchmark::State& state) {
  const auto threads = static_cast<unsigned>(state.range(0));
  const unsigned blocks = 4;
  const int rounds = 100;
  std::vector<int> out(blocks * threads);
  std::uint64_t switches = 0;
  for (auto _ : state)
    switches += launch("barriers", blocks, threads, rounds, static_cast<int>(state.range(1)), out).stats.switches;
  set_per(state, "per_barrier", static_cast<double>(state.iterations()) * blocks * rounds);
  set_per(state, "per_switch", static_cast<double>(switches));
}

void BM_shuffle(benchmark::State& state) {
  const auto threads = static_cast<unsigned>(state.range(0));
  const unsigned blocks = 4;
  const int rounds = 100;
  std::vector<int> out(blocks * threads);
  std::uint64_t switches = 0;
  for (auto _ : state)
    switches += launch("shuffles", blocks, threads, rounds, static_cast<int>(state.range(1)), out).stats.switches;
  set_per(state, "per_shuffle", static_cast<double>(state.iterations()) * blocks * rounds * (threads / 32));
  set_per(state, "per_switch", static_cast<double>(switches));
}

}  // namespace

BENCHMARK(BM_thread_no_wait)->ArgsProduct({{256, 1024}, {0, 1}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_syncthreads)->ArgsProduct({{32, 256, 1024}, {0, 1}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_shuffle)->ArgsProduct({{32, 256}, {0, 1}})->Unit(benchmark::kMicrosecond);

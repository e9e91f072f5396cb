// SPDX-License-Identifier: Apache-2.0
// The sandbox fleet on a local Redis (127.0.0.1, a free port, started here): compile throughput
// through 1, 2 and 4 members with the compile cache off (every request a real NVRTC compile in a
// child: compile-bound) and on (every request a cache hit: the fleet's own cost), and the time per
// request of a cache hit through the fleet against `leap-sandbox serve` over a pipe, side by side.
//
//   build/default/benchmarks/bench_fleet
//
// Each member runs -j 1 (one member per GPU is the deployment; here they compete for the CPU cores).
// Redis appends every write to its file and syncs once a second (appendfsync everysec), as the
// docs/fleet.md's deployment does.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <leap/sandbox/fleet_client.hpp>

#include "fleet_harness.hpp"

namespace {

namespace sb = leap::sandbox;
using namespace fleet_test;

std::atomic<int> g_unique{0};

std::string kernel(int k) {
  return "extern \"C\" __global__ void scale_" + std::to_string(k) +
         "(float* x, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) x[i] = x[i] * " +
         std::to_string(k) + ".5f + 1.0f;\n}\n";
}

// One Redis for the whole run.
struct Fixture {
  TempDir dir;
  std::unique_ptr<RedisServer> redis;
  Fixture() {
    const std::string program = find_program("redis-server");
    if (!program.empty()) redis = std::make_unique<RedisServer>(program, dir.path(), "everysec");
  }
};
Fixture& fixture() {
  static Fixture f;
  return f;
}

// `count` members on their own stream, each -j 1, with or without the compile cache.
struct Members {
  TempDir cache;
  std::string stream;
  std::vector<std::unique_ptr<Child>> children;
  Members(int count, bool use_cache) : stream("bench:" + std::to_string(g_unique++)) {
    for (int w = 0; w < count; ++w) {
      std::vector<std::string> argv = {
          LEAP_SANDBOX_CLI,        "fleet-member", "--redis", fixture().redis->url(), "--stream", stream, "--name",
          "b" + std::to_string(w), "-j",           "1"};
      if (!use_cache) argv.push_back("--no-cache");
      children.push_back(std::make_unique<Child>(argv, cache.path() / ("member" + std::to_string(w) + ".log"),
                                                 std::vector<std::pair<std::string, std::string>>{
                                                     {"LEAP_SANDBOX_CACHE_DIR", (cache.path() / "cache").string()}}));
    }
  }
  ~Members() {
    for (auto& c : children) c->signal(SIGTERM);
    for (auto& c : children) c->wait(30s);
  }
};

sb::FleetClient make_client(const std::string& stream) {
  return sb::FleetClient({.redis = fixture().redis->address(), .stream = stream, .timeout = 300s});
}

void ready_or_skip(benchmark::State& state) {
  if (!fixture().redis) state.SkipWithError("redis-server is not installed (apt-get install redis-server)");
}

// Throughput: batches of 8 requests per member in flight; items = requests answered.
void BM_FleetCompile(benchmark::State& state) {
  ready_or_skip(state);
  if (!fixture().redis) return;
  const int members = static_cast<int>(state.range(0));
  const bool use_cache = state.range(1) != 0;
  Members fleet(members, use_cache);
  sb::FleetClient client = make_client(fleet.stream);
  const int batch = 8 * members;
  // Warm-up: every member started, its evaluator up, and (cache on) the batch's kernels cached.
  std::vector<std::future<sb::FleetReply>> warm;
  for (int i = 0; i < 4 * batch; ++i) warm.push_back(client.compile(kernel(i % batch)));
  for (auto& f : warm) f.get();
  for (auto _ : state) {
    std::vector<std::future<sb::FleetReply>> answers;
    answers.reserve(static_cast<std::size_t>(batch));
    for (int i = 0; i < batch; ++i) answers.push_back(client.compile(kernel(use_cache ? i : 1000000 + g_unique++)));
    for (auto& f : answers) {
      if (!f.get().ok) state.SkipWithError("a compile request failed");
    }
  }
  state.SetItemsProcessed(state.iterations() * batch);
}
BENCHMARK(BM_FleetCompile)
    ->ArgNames({"members", "cache"})
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({4, 0})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Args({4, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(3.0);

// One cache-hit compile at a time through the fleet (1 member): submit, answer, future.
void BM_FleetRoundTripCacheHit(benchmark::State& state) {
  ready_or_skip(state);
  if (!fixture().redis) return;
  Members fleet(1, true);
  sb::FleetClient client = make_client(fleet.stream);
  const std::string source = kernel(7);
  client.compile(source).get();
  for (auto _ : state) {
    if (!client.compile(source).get().ok) state.SkipWithError("a compile request failed");
  }
}
BENCHMARK(BM_FleetRoundTripCacheHit)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(2.0);

// The same through `leap-sandbox serve -j 1` over a pipe: the baseline the fleet's overhead is over.
void BM_ServePipeRoundTripCacheHit(benchmark::State& state) {
  TempDir dir;
  int to_child[2], from_child[2];
  if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) {
    state.SkipWithError("pipe failed");
    return;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    ::close(to_child[1]);
    ::close(from_child[0]);
    ::setenv("LEAP_SANDBOX_CACHE_DIR", (dir.path() / "cache").c_str(), 1);
    ::execl(LEAP_SANDBOX_CLI, LEAP_SANDBOX_CLI, "serve", "-j", "1", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  FILE* in = ::fdopen(from_child[0], "r");
  std::string escaped;
  for (const char c : kernel(7))
    escaped += c == '\n' ? std::string("\\n") : c == '"' ? std::string("\\\"") : std::string(1, c);
  const std::string request = "{\"id\": 1, \"op\": \"compile\", \"source\": \"" + escaped + "\"}\n";
  char line[8192];
  auto round_trip = [&] {
    if (::write(to_child[1], request.data(), request.size()) != static_cast<ssize_t>(request.size())) return false;
    return std::fgets(line, sizeof line, in) != nullptr &&
           std::string_view(line).find("\"ok\":true") != std::string_view::npos;
  };
  if (!round_trip()) state.SkipWithError("serve did not answer the warm-up request");
  for (auto _ : state) {
    if (!round_trip()) state.SkipWithError("serve failed a request");
  }
  ::close(to_child[1]);
  std::fclose(in);
  int status = 0;
  ::waitpid(pid, &status, 0);
}
BENCHMARK(BM_ServePipeRoundTripCacheHit)->Unit(benchmark::kMicrosecond)->UseRealTime()->MinTime(2.0);

}  // namespace

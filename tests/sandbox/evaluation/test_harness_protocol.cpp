// SPDX-License-Identifier: Apache-2.0
// The evaluation protocol against the CPU fake of the driver: emulated candidates (honest, memoising,
// call-counting, clock-reading, guard-overwriting, input-writing, never-writing, reference-sabotaging,
// slow) get exactly the verdict they must, an honest one the speedup its emulation implies, and the
// log shows the order of poison, fresh inputs, launch and comparison, the module reload and the
// scrubbed buffers. This is how reward integrity is proven on machines without a GPU.
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <leap/kernel_order.hpp>
#include <leap/rank_advantage.hpp>
#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/task.hpp>
#include "evaluation/timer_choice.hpp"
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cpu_bound.hpp"
#include "fake_gpu_driver.hpp"
#include "harness_runner.hpp"
#include "evaluation/input_generator.hpp"
#include "evaluation/runner_reply.hpp"
#include "runner_pipe/runner_stages.hpp"
#include "evaluation/runner_rules.hpp"

namespace sb = leap::sandbox;
using leap::Verdict;
using nlohmann::json;
using sb::test::FakeCall;
using sb::test::FakeGpu;
using sb::test::FakeKernel;

// These tests hold the protocol to exact figures (speedups, run counts, step orders), so they run
// on the idealised fake; test_fake_rules.cpp holds the harness to the driver's real rules.
constexpr sb::test::FakeRules k_exact = sb::test::FakeRules::idealised();

namespace {

// scale_add(x, y, out, alpha, n): out[i] = alpha * x[i] + y[i]. Three size sets, two trials each:
// six checked calls of the candidate before timing.
constexpr int k_checked_calls = 6;

sb::TaskSpec fake_task() {
  sb::TaskSpec t = sb::parse_task(R"json({
    "name": "scale_add", "description": "d", "entry": "scale_add",
    "params": [
      {"name": "x", "dtype": "float32", "role": "in", "shape": ["n"]},
      {"name": "y", "dtype": "float32", "role": "in", "shape": ["n"]},
      {"name": "out", "dtype": "float32", "role": "out", "shape": ["n"]},
      {"name": "alpha", "kind": "scalar", "dtype": "float32", "value": 1.75},
      {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}],
    "sizes": {"n": 4096}, "check_sizes": [{"n": 5}, {"n": 1001}],
    "launch": {"grid": ["ceil_div(n, 1024)"], "block": [256]},
    "reference": "extern \"C\" __global__ void scale_add(const float*, const float*, float*, float, int) {}",
    "trials": 2,
    "timing": {"warmup": 3, "min_reps": 10, "max_reps": 40, "target_spread": 0.02, "budget_ms": 1500},
    "time_limit_ms": 20000})json");
  return t;
}

// The kernel's work on the fake device; false when an argument points outside memory.
bool compute(FakeCall& c) {
  const int n = c.i32(4);
  float* x = c.floats(c.pointer(0), static_cast<std::size_t>(n));
  float* y = c.floats(c.pointer(1), static_cast<std::size_t>(n));
  float* out = c.floats(c.pointer(2), static_cast<std::size_t>(n));
  if (x == nullptr || y == nullptr || out == nullptr) return false;
  for (int i = 0; i < n; ++i) out[i] = c.f32(3) * x[i] + y[i];
  return true;
}

FakeKernel honest(double ms) {
  return [ms](FakeCall& c) {
    compute(c);
    c.duration_ms = ms;
  };
}

// The reference: 2 ms, or 100 times that when it meets a NaN in its input (a data-dependent slow path
// a saboteur could aim for).
void reference(FakeCall& c) {
  compute(c);
  const int n = c.i32(4);
  const float* x = c.floats(c.pointer(0), static_cast<std::size_t>(n));
  bool nan = false;
  for (int i = 0; x != nullptr && i < n; ++i) nan = nan || std::isnan(x[i]);
  c.duration_ms = nan ? 200.0 : 2.0;
}

// Calls so far in this module instance (after this one).
std::uint64_t count_call(FakeCall& c) { return ++c.globals["calls"]; }

using Outcome = sb::test::HarnessOutcome;
using sb::test::verdict_of;

// The request the runner-rule tests send: the fake modules, seed 42, no timing.
sb::detail::EvaluationRequest untimed_request() {
  sb::detail::EvaluationRequest request;
  request.task = sb::task_to_json(fake_task());
  request.candidate = "fake:candidate";
  request.reference = "fake:reference";
  request.seed = 42;
  request.time = false;
  return request;
}

Outcome evaluate(FakeGpu& gpu, const FakeKernel& candidate, sb::TaskSpec task = fake_task(), FakeKernel ref = reference,
                 bool time = true) {
  gpu.add_module("fake:candidate", {{"scale_add", candidate}});
  gpu.add_module("fake:reference", {{"scale_add", std::move(ref)}});
  return sb::test::run_harness(gpu, task, 42, time);
}

}  // namespace

TEST_CASE("harness (fake GPU): an honest kernel is correct, with the speedup its emulation implies",
          "[sandbox][harness]") {
  FakeGpu gpu{k_exact};
  const Outcome o = evaluate(gpu, honest(1.0));
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "correct");
  CHECK(o.result.speedup == Approx(2.0).epsilon(1e-3));
  CHECK(o.result.candidate.method == "cupti");
  CHECK(o.result.candidate.median_ms == Approx(1.0).epsilon(1e-3));
  CHECK(o.result.reference.median_ms == Approx(2.0).epsilon(1e-3));
  CHECK(o.result.candidate.events_median_ms == Approx(1.0).epsilon(1e-3));
  CHECK(o.result.candidate.runs == 10);  // no spread at all: stops at min_reps
  CHECK(o.result.trials == k_checked_calls);
  CHECK(o.reply.at("timing").at("dropped_records") == 0);
  // Warm-up by GPU time: at least 50 ms of each kernel.
  CHECK(o.reply.at("timing").at("warmup").at("candidate").at("gpu_ms").get<double>() >= 50.0);
  CHECK(o.reply.at("timing").at("warmup").at("reference").at("gpu_ms").get<double>() >= 50.0);
  // Clean state: every buffer scrubbed before it was freed, nothing left allocated.
  CHECK(gpu.unscrubbed_frees == 0);
  CHECK(gpu.live_allocations() == 0);
}

TEST_CASE("harness (fake GPU): every emulated cheat gets the verdict it must", "[sandbox][harness]") {
  SECTION("memoising on (input pointer, first element) in __device__ globals: never hits, honest speed") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, [](FakeCall& c) {
      const int n = c.i32(4);
      const float* x = c.floats(c.pointer(0), static_cast<std::size_t>(n));
      std::uint32_t first = 0;
      std::memcpy(&first, x, 4);
      const std::uint64_t key = c.pointer(0) ^ (std::uint64_t{first} << 32);
      if (c.globals.count("key") != 0 && c.globals["key"] == key) {
        c.duration_ms = 0.01;  // "the answer is still in out": return at once
        return;
      }
      c.globals["key"] = key;
      compute(c);
      c.duration_ms = 1.0;
    });
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(o.result.speedup == Approx(2.0).epsilon(1e-3));  // what an honest 1 ms kernel gets, not 200x
  }
  SECTION("memoising on the input pointer alone: caught by the second trial") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, [](FakeCall& c) {
      if (c.globals["last_x"] == c.pointer(0)) return;
      c.globals["last_x"] = c.pointer(0);
      compute(c);
      c.duration_ms = 1.0;
    });
    REQUIRE(verdict_of(o.result) == "wrong_answer");
    CHECK(o.reply.at("when_timed") == false);
    CHECK(o.result.detail.find("trial 2") != std::string::npos);
  }
  SECTION("counting calls and stopping work after the checked ones") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, [](FakeCall& c) {
      c.duration_ms = 0.01;
      if (count_call(c) > k_checked_calls) return;
      compute(c);
      c.duration_ms = 1.0;
    });
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "wrong_answer");
    CHECK(o.reply.at("when_timed") == true);
    CHECK(o.result.detail.find("different result when timed") != std::string::npos);
    CHECK(o.result.feedback.rfind("Wrong answer when timed: ", 0) == 0);
  }
  SECTION("reading the clock (%globaltimer) and stopping work 30 ms after its first call") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, [](FakeCall& c) {
      if (c.globals.count("t0") == 0) c.globals["t0"] = c.now_ns;
      c.duration_ms = 0.01;
      if (c.now_ns - c.globals["t0"] > 30'000'000) return;
      compute(c);
      c.duration_ms = 1.0;
    });
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "wrong_answer");
    CHECK(o.reply.at("when_timed") == true);
    CHECK(o.result.detail.find("different result when timed") != std::string::npos);
  }
  SECTION("writing past its buffer's end, into the guard, only when timed") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, [](FakeCall& c) {
      compute(c);
      c.duration_ms = 1.0;
      if (count_call(c) <= k_checked_calls) return;
      const int n = c.i32(4);
      if (float* past = c.floats(c.pointer(2) + static_cast<std::uint64_t>(n + 3) * 4, 1)) *past = 1.0f;
    });
    REQUIRE(verdict_of(o.result) == "wrong_answer");
    CHECK(o.reply.at("when_timed") == true);
    CHECK(o.result.detail.find("wrote outside buffer 'out' (0 bytes before its start, 4 after its end) while timed") !=
          std::string::npos);
  }
  SECTION("writing its input, only when timed") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, [](FakeCall& c) {
      compute(c);
      c.duration_ms = 1.0;
      if (count_call(c) > k_checked_calls) *c.floats(c.pointer(0), 1) = 123.0f;
    });
    REQUIRE(verdict_of(o.result) == "wrong_answer");
    CHECK(o.reply.at("when_timed") == true);
    CHECK(o.result.detail.find("modified its input 'x' when timed") != std::string::npos);
  }
  SECTION("never writing its output") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, [](FakeCall& c) { c.duration_ms = 0.001; });
    REQUIRE(verdict_of(o.result) == "wrong_answer");
    CHECK(o.reply.at("when_timed") == false);
    CHECK(o.result.detail.find("NaN (never written?)") != std::string::npos);
    CHECK(o.result.detail.find("trial 1") != std::string::npos);
  }
  SECTION("sabotaging the reference: NaN over every other allocation, guards included, when timed") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, [&gpu](FakeCall& c) {
      compute(c);
      c.duration_ms = 1.0;
      if (count_call(c) <= k_checked_calls) return;
      for (const auto& [start, bytes] : gpu.allocations()) {
        bool own = false;
        for (std::size_t a = 0; a < 3; ++a) own = own || (c.pointer(a) >= start && c.pointer(a) < start + bytes);
        if (!own) std::memset(gpu.memory(start, bytes), 0xFF, bytes);
      }
    });
    REQUIRE(verdict_of(o.result) == "wrong_answer");
    CHECK(o.reply.at("when_timed") == true);
    CHECK(o.result.detail.find("guard zones around the reference's buffer") != std::string::npos);
  }
  SECTION("sabotaging the reference's inputs precisely (guards spared): fresh inputs undo it, honest speed") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, [&gpu](FakeCall& c) {
      compute(c);
      c.duration_ms = 1.0;
      if (count_call(c) <= k_checked_calls) return;
      for (const auto& [start, bytes] : gpu.allocations()) {
        bool own = false;
        for (std::size_t a = 0; a < 3; ++a) own = own || (c.pointer(a) >= start && c.pointer(a) < start + bytes);
        if (!own && bytes > 2 * 4096) std::memset(gpu.memory(start + 4096, bytes - 2 * 4096), 0xFF, bytes - 2 * 4096);
      }
    });
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(o.result.speedup == Approx(2.0).epsilon(1e-3));
    CHECK(o.result.reference.median_ms == Approx(2.0).epsilon(1e-3));
  }
  SECTION("an illegal address only when timed") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, [](FakeCall& c) {
      compute(c);
      c.duration_ms = 1.0;
      if (count_call(c) > k_checked_calls + 2) c.status = sb::test::k_illegal_address;
    });
    REQUIRE(verdict_of(o.result) == "runtime_error");
    CHECK(o.result.cuda_error == "CUDA_ERROR_ILLEGAL_ADDRESS");
    CHECK(o.reply.at("restart") == true);
  }
}

TEST_CASE("harness (fake GPU): poison, fresh inputs, launch and comparison come in that order", "[sandbox][harness]") {
  FakeGpu gpu{k_exact};
  const Outcome o = evaluate(gpu, honest(1.0));
  REQUIRE(verdict_of(o.result) == "correct");
  const std::vector<sb::test::FakeOp>& log = gpu.log;
  auto stage_at = [&](const std::string& name, std::size_t from = 0) {
    for (std::size_t i = from; i < log.size(); ++i) {
      if (log[i].what == "stage" && log[i].name == name) return i;
    }
    return log.size();
  };

  // The module is reloaded after the checked trials and before any warm-up or timed launch.
  const std::size_t reload = stage_at("reload");
  REQUIRE(reload < log.size());
  CHECK(log[reload + 1].what == "unload");
  CHECK(log[reload + 1].name == "fake:candidate");
  CHECK(log[reload + 2].what == "load");
  CHECK(log[reload + 2].name == "fake:candidate");
  for (std::size_t i = 0; i < reload; ++i) {
    if (log[i].what == "stage")
      CHECK((log[i].name == "load" || log[i].name == "candidate" || log[i].name == "reference" ||
             log[i].name == "check"));
  }

  // Every timed launch of the candidate: fresh inputs drawn (seeds never used before) and the output
  // poisoned since the previous launch, caches flushed, and only the launch between the events.
  std::set<std::uint64_t> seeds_seen;
  std::vector<std::vector<std::uint64_t>> timed_seeds;  // per candidate timed run: x's and y's seed
  std::size_t prev_launch = stage_at("timing:candidate");
  REQUIRE(prev_launch < log.size());
  for (std::size_t i = 0; i < prev_launch; ++i) {
    if (log[i].what == "generate") seeds_seen.insert(log[i].seed);
  }
  int timed = 0;
  for (std::size_t i = prev_launch; i < log.size(); ++i) {
    if (log[i].what != "launch") continue;
    if (log[i].name == "fake:candidate:scale_add") {
      ++timed;
      const std::vector<std::uint64_t>& args = log[i].args;
      std::vector<std::uint64_t> seeds(2, 0);
      bool poisoned = false, flushed = false;
      for (std::size_t k = prev_launch; k < i; ++k) {
        if (log[k].what == "generate" && log[k].ptr == args[0]) seeds[0] = log[k].seed;
        if (log[k].what == "generate" && log[k].ptr == args[1]) seeds[1] = log[k].seed;
        poisoned = poisoned || (log[k].what == "fill" && log[k].ptr == args[2] && log[k].bytes == 4096 * 4 &&
                                log[k].seed == 0x7FC0DEADu);
        flushed = flushed || log[k].what == "flush";
      }
      CHECK(seeds[0] != 0);
      CHECK(seeds[1] != 0);
      CHECK(seeds_seen.insert(seeds[0]).second);
      CHECK(seeds_seen.insert(seeds[1]).second);
      CHECK(poisoned);
      CHECK(flushed);
      CHECK(log[i - 1].what == "record_start");
      CHECK(log[i + 1].what == "record_stop");
      timed_seeds.push_back(seeds);
    }
    prev_launch = i;
  }
  CHECK(timed == 10);

  // Every timed run answers for itself: the reference's timed run on the very same inputs (the same
  // seeds, drawn afresh into its own buffers after the candidate's run), then, outside both windows,
  // every buffer of the pair compared on the device and the records read back, before the next pair.
  std::size_t pairs = 0;
  for (std::size_t i = stage_at("timing:candidate"); i < log.size(); ++i) {
    if (log[i].what != "launch" || log[i].name != "fake:candidate:scale_add") continue;
    const std::vector<std::uint64_t>& cand_args = log[i].args;
    std::size_t ref_launch = i + 1;
    while (ref_launch < log.size() && log[ref_launch].what != "launch") ++ref_launch;
    REQUIRE(ref_launch < log.size());
    CHECK(log[ref_launch].name == "fake:reference:scale_add");
    CHECK(log[ref_launch - 1].what == "record_start");
    const std::vector<std::uint64_t>& ref_args = log[ref_launch].args;
    std::vector<std::uint64_t> ref_seeds(2, 0);
    bool ref_flushed = false;
    for (std::size_t k = i + 1; k < ref_launch; ++k) {
      for (std::size_t a = 0; a < 2; ++a) {
        if (log[k].what == "generate" && log[k].ptr == ref_args[a]) ref_seeds[a] = log[k].seed;
      }
      ref_flushed = ref_flushed || log[k].what == "flush";
    }
    REQUIRE(pairs < timed_seeds.size());
    CHECK(ref_seeds == timed_seeds[pairs]);
    CHECK(ref_flushed);
    std::set<std::uint64_t> compared;
    bool read_back = false;
    for (std::size_t k = ref_launch + 1; k < log.size() && log[k].what != "launch"; ++k) {
      if (log[k].what == "compare") {
        compared.insert(log[k].ptr);
        for (std::size_t a = 0; a < 3; ++a) {
          if (log[k].ptr == cand_args[a]) CHECK(log[k].seed == ref_args[a]);  // each buffer against its twin
        }
      }
      read_back = read_back || (log[k].what == "download" && !compared.empty());
    }
    CHECK(compared == std::set<std::uint64_t>{cand_args[0], cand_args[1], cand_args[2]});
    CHECK(read_back);
    ++pairs;
  }
  CHECK(pairs == 10);
  CHECK(o.reply.at("timing").at("checked_runs") == 10);
}

// A thousand evaluations: a 1 MiB device each (the default 32 MiB would be filled a thousand times).
constexpr std::size_t k_small_arena = std::size_t{1} << 20;

// The attack every timed run being checked defeats: work on some timed runs, return at once on the
// others. The kernel knows when timing starts (its module is reloaded, its globals are fresh) and
// counts the warm-up, so it can aim at any timed run it likes; whichever it skips, the verdict is
// wrong_answer "when timed", over a thousand evaluation seeds and four ways of choosing.
TEST_CASE("harness (fake GPU): a kernel that skips work on any timed run is caught, every time",
          "[sandbox][harness][timed_cheats]") {
  sb::TaskSpec task = fake_task();
  task.sizes = {{"n", 256}};
  task.check_sizes = {{{"n", 5}}};
  // The warm-up's length: the same for every evaluation of a kernel of this emulated speed.
  int warmup_launches = 0;
  {
    FakeGpu gpu(k_exact, k_small_arena);
    const Outcome o = evaluate(gpu, honest(1.0), task);
    REQUIRE(verdict_of(o.result) == "correct");
    warmup_launches = o.reply.at("timing").at("warmup").at("candidate").at("launches").get<int>();
    REQUIRE(o.result.candidate.runs == 10);
  }
  const char* strategies[] = {"a random subset", "one run drawn at random", "the last of the minimum runs",
                              "every run once %globaltimer shows a steady rhythm"};
  int caught[4] = {0, 0, 0, 0}, evaluations[4] = {0, 0, 0, 0};
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    const int strategy = static_cast<int>(seed % 4);
    std::uint64_t state = seed * 0x9E3779B97F4A7C15ULL;
    auto next = [&state] {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      return state;
    };
    const int only_run = 1 + static_cast<int>(next() % 10);
    std::vector<bool> subset(64);
    for (std::size_t r = 0; r < subset.size(); ++r) subset[r] = next() % 2 == 0;
    subset[next() % 10] = true;  // at least one skipped run among the first ten
    const FakeKernel cheat = [&, strategy](FakeCall& c) {
      // Timing starts with a reloaded module, whose first call already has the timing sizes (the
      // trials start with the check sizes); the warm-up comes first.
      const std::uint64_t call = ++c.globals["calls"];
      if (call == 1) c.globals["timing_instance"] = c.i32(4) == 256 ? 1 : 0;
      // %globaltimer between calls: a rhythm that stays the same looks like the unchecked middle of
      // the loop, where a harness that checked some runs would not download anything.
      const std::uint64_t gap = call > 1 ? c.now_ns - c.globals["last_ns"] : 0;
      const std::uint64_t previous_gap = c.globals["last_gap"];
      c.globals["last_ns"] = c.now_ns;
      c.globals["last_gap"] = gap;
      const bool same_rhythm = gap + gap / 100 >= previous_gap && previous_gap + previous_gap / 100 >= gap;
      c.globals["steady"] = same_rhythm ? c.globals["steady"] + 1 : 0;
      const int timed = static_cast<int>(call) - warmup_launches;
      bool skip = false;
      if (c.globals["timing_instance"] == 1 && timed >= 1) {
        if (strategy == 0) skip = subset[static_cast<std::size_t>(timed - 1) % subset.size()];
        if (strategy == 1) skip = timed == only_run;
        if (strategy == 2) skip = timed == 10;
        if (strategy == 3) skip = c.globals["steady"] >= 3;
      }
      c.duration_ms = 1.0;
      if (skip) {
        c.duration_ms = 0.01;  // "the answer is still in out", and the timer sees a 100x kernel
        ++c.globals["skipped"];
        return;
      }
      compute(c);
    };
    FakeGpu gpu(k_exact, k_small_arena);
    const Outcome o = evaluate(gpu, cheat, task);
    ++evaluations[strategy];
    INFO("seed " << seed << ", skipping " << strategies[strategy] << ": " << o.reply.dump());
    REQUIRE(verdict_of(o.result) == "wrong_answer");
    CHECK(o.reply.at("when_timed") == true);
    CHECK(o.result.detail.find("different result when timed (timed run ") != std::string::npos);
    CHECK(std::isnan(o.result.speedup));
    ++caught[strategy];
  }
  for (int s = 0; s < 4; ++s) {
    INFO(strategies[s]);
    CHECK(evaluations[s] == 250);
    CHECK(caught[s] == 250);
  }
}

TEST_CASE("harness (fake GPU): every timed run checked leaves an honest kernel its speedup, exactly",
          "[sandbox][harness][timed_cheats]") {
  sb::TaskSpec task = fake_task();
  task.sizes = {{"n", 256}};
  task.check_sizes = {{{"n", 5}}};
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    FakeGpu gpu(k_exact, k_small_arena);
    gpu.add_module("fake:candidate", {{"scale_add", honest(1.0)}});
    gpu.add_module("fake:reference", {{"scale_add", reference}});
    const Outcome o = sb::test::run_harness(gpu, task, seed, true);
    INFO("seed " << seed << ": " << o.reply.dump());
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(o.result.speedup == 2.0);
    CHECK(o.reply.at("timing").at("checked_runs") == o.result.candidate.runs);
  }
}

TEST_CASE("harness (fake GPU): timed inputs differ between evaluations with the same request seed",
          "[sandbox][harness]") {
  // The loop example fixes its seed; OS randomness in every timed run's seed keeps those inputs unknown.
  auto timed_seeds = [] {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, honest(1.0));
    REQUIRE(verdict_of(o.result) == "correct");
    std::set<std::uint64_t> seeds;
    bool timing = false;
    for (const auto& op : gpu.log) {
      timing = timing || (op.what == "stage" && op.name == "timing:candidate");
      if (timing && op.what == "generate") seeds.insert(op.seed);
    }
    return seeds;
  };
  const std::set<std::uint64_t> first = timed_seeds(), second = timed_seeds();
  REQUIRE(first.size() >= 20);
  std::vector<std::uint64_t> common;
  std::set_intersection(first.begin(), first.end(), second.begin(), second.end(), std::back_inserter(common));
  CHECK(common.empty());
}

TEST_CASE("harness (fake GPU): a timing faster than the physical floor is flagged and not paid",
          "[sandbox][harness][floor]") {
  // scale_add at n = 4096 reads x and y: 32 KiB. At the fake's 1 TB/s, with 1.5x headroom, no run
  // can take less than 32768 / 1.5e12 s = 2.18e-5 ms.
  const double floor_ms = 32768.0 / (1e12 * 1.5) * 1e3;
  SECTION("an honest kernel: the floor is reported and far below it") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, honest(1.0));
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "correct");
    const json& f = o.reply.at("timing").at("floor");
    CHECK(f.at("bytes") == 32768);
    CHECK(f.at("floor_ms").get<double>() == Approx(floor_ms));
    CHECK_FALSE(o.reply.at("timing").contains("below_floor"));
    CHECK(o.result.below_floor.empty());
    CHECK(o.result.speedup == Approx(2.0));
  }
  SECTION("a kernel whose timed runs all claim too little time: correct, flagged, no speedup") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, honest(floor_ms / 10));
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(o.result.below_floor.find("less than the") != std::string::npos);
    CHECK(o.result.below_floor.find("32768 bytes") != std::string::npos);
    CHECK(std::isnan(o.result.speedup));
    CHECK(o.result.feedback.rfind("Correct, but the timing is not credited: ", 0) == 0);
    const json result = json::parse(sb::to_json(o.result));
    CHECK(result.at("below_floor").is_string());
    CHECK(result.at("speedup").is_null());
  }
  SECTION("one run below the floor is enough") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, [floor_ms](FakeCall& c) {
      compute(c);
      c.duration_ms = ++c.globals["calls"] == 66 ? floor_ms / 2 : 1.0;  // 63 warm-up launches, then the third timed run
    });
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK_FALSE(o.result.below_floor.empty());
    CHECK(std::isnan(o.result.speedup));
  }
  SECTION("a device that does not report its bandwidth: no floor rather than a made-up one") {
    FakeGpu gpu{k_exact};
    gpu.peak_bandwidth = 0.0;
    const Outcome o = evaluate(gpu, honest(floor_ms / 10));
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK_FALSE(o.reply.at("timing").contains("floor"));
    CHECK(o.result.below_floor.empty());
  }
}

// ---- Unknown speed never pays -------------------------------------------------------------------
// A correct kernel whose speedup is unknown would tie, under a speed order, with every known speed of
// its turn: a 0.5x kernel that hides its speed would rank with a 10x one. A candidate can make its
// speed unknown at will, so the order ranks an unknown speedup below every known one, and the result
// says why it is unknown.

namespace {

// The task of the tests below: scale_add at one size set (4096), one trial, a 500 ms time limit.
sb::TaskSpec tight_task() {
  sb::TaskSpec t = fake_task();
  t.check_sizes.clear();
  t.trials = 1;
  t.time_limit_ms = 500;
  return t;
}

// The advantages of the three results as one group, ranked by KernelOrder::with_speedup() over the
// outcomes a trainer would make of them (each solved at turn 1, with the result's speedup).
std::vector<double> rank_solved(const std::vector<sb::EvalResult>& results) {
  std::vector<leap::Outcome> group;
  for (const sb::EvalResult& r : results) group.push_back(leap::Outcome{1, Verdict::correct, r.speedup, 100});
  return leap::rank_advantages(group, leap::KernelOrder::with_speedup());
}

// Honest kernels for comparison, against the 2 ms reference: 4 ms (0.5x) and 0.2 ms (10x).
struct Honest {
  sb::EvalResult slow, fast;
};
Honest honest_pair(const sb::TaskSpec& task) {
  FakeGpu slow_gpu{k_exact}, fast_gpu{k_exact};
  Honest h{evaluate(slow_gpu, honest(4.0), task).result, evaluate(fast_gpu, honest(0.2), task).result};
  REQUIRE(verdict_of(h.slow) == "correct");
  REQUIRE(verdict_of(h.fast) == "correct");
  REQUIRE(h.slow.speedup == Approx(0.5).epsilon(1e-3));
  REQUIRE(h.fast.speedup == Approx(10.0).epsilon(1e-3));
  CHECK(h.slow.speedup_unknown == sb::SpeedupUnknown::none);
  return h;
}

}  // namespace

TEST_CASE(
    "hiding speed does not pay: a kernel slow only in its trials is untimed and ranks below an honest "
    "0.5x kernel",
    "[sandbox][harness][unknown_speed]") {
  const sb::TaskSpec task = tight_task();
  const Honest h = honest_pair(task);
  // The same 0.5x kernel, 100 ms slow in the one correctness trial at the timing sizes (it can count
  // its launches in __device__ state, which lasts until the module reload before timing): the trials
  // then seem to take most of the time limit, and timing is skipped.
  FakeGpu gpu{k_exact};
  const Outcome o = evaluate(
      gpu,
      [](FakeCall& c) {
        compute(c);
        if (count_call(c) == 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        c.duration_ms = 4.0;
      },
      task);
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "correct");
  REQUIRE(std::isnan(o.result.speedup));
  CHECK(o.result.speedup_unknown == sb::SpeedupUnknown::no_room);
  CHECK(o.result.speedup_unknown_detail.find("took most of the task's time limit") != std::string::npos);
  const json result = json::parse(sb::to_json(o.result));
  CHECK(result.at("speedup").is_null());
  CHECK(result.at("speedup_unknown").at("reason") == "no_room");
  CHECK(result.at("speedup_unknown").at("detail") == o.result.speedup_unknown_detail);
  // Ranked with a speed order: below the honest 0.5x kernel (it used to tie with it, and with 10x).
  const std::vector<double> a = rank_solved({o.result, h.slow, h.fast});
  CHECK(a[0] < a[1]);
  CHECK(a[1] < a[2]);
  CHECK(a[0] == -1.0);
}

TEST_CASE("hiding speed does not pay: a kernel below the physical floor once ranks below an honest 0.5x kernel",
          "[sandbox][harness][unknown_speed][floor]") {
  const sb::TaskSpec task = tight_task();
  const Honest h = honest_pair(task);
  // The same 0.5x kernel, except one launch in twenty that claims less time than reading its inputs
  // once would take: after 15 warm-up launches (60 ms of GPU time), the fifth timed run.
  const double floor_ms = 32768.0 / (1e12 * 1.5) * 1e3;  // as in the floor test above
  FakeGpu gpu{k_exact};
  const Outcome o = evaluate(
      gpu,
      [floor_ms](FakeCall& c) {
        compute(c);
        c.duration_ms = count_call(c) % 20 == 0 ? floor_ms / 2 : 4.0;
      },
      task);
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "correct");
  REQUIRE(std::isnan(o.result.speedup));
  CHECK(o.result.candidate.runs == 10);
  CHECK(o.result.speedup_unknown == sb::SpeedupUnknown::below_floor);
  CHECK(o.result.speedup_unknown_detail == o.result.below_floor);
  const json result = json::parse(sb::to_json(o.result));
  CHECK(result.at("speedup_unknown").at("reason") == "below_floor");
  const std::vector<double> a = rank_solved({o.result, h.slow, h.fast});
  CHECK(a[0] < a[1]);
  CHECK(a[1] < a[2]);
}

TEST_CASE("harness (fake GPU): a result says why its speedup is unknown, and nothing when it is known",
          "[sandbox][harness][unknown_speed]") {
  const auto reason_in_json = [](const sb::EvalResult& r) {
    const json j = json::parse(sb::to_json(r));
    return j.at("speedup_unknown").is_null() ? std::string("null")
                                             : j.at("speedup_unknown").at("reason").get<std::string>();
  };
  SECTION("measured: none, and null in the JSON") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, honest(1.0));
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(o.result.speedup == Approx(2.0).epsilon(1e-3));
    CHECK(o.result.speedup_unknown == sb::SpeedupUnknown::none);
    CHECK(o.result.speedup_unknown_detail.empty());
    CHECK(reason_in_json(o.result) == "null");
  }
  SECTION("timing turned off: not_requested") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, honest(1.0), fake_task(), reference, false);
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(std::isnan(o.result.speedup));
    CHECK(o.result.speedup_unknown == sb::SpeedupUnknown::not_requested);
    CHECK(reason_in_json(o.result) == "not_requested");
  }
  SECTION("a timer that measured nothing: not_measured, never a speedup of 0 or infinity") {
    // The fake's clock moves with every launch, so the reply comes from a device whose timer read 0.
    for (const double candidate_ms : {0.0, std::nan("")}) {
      sb::detail::EvaluationReply reply;
      reply.ok = true;
      reply.verdict = Verdict::correct;
      sb::detail::TimingReport& timing = reply.timing.emplace();
      timing.candidate.median_ms = candidate_ms;
      timing.candidate.runs = 10;
      timing.reference.median_ms = 2.0;
      timing.reference.runs = 10;
      sb::EvalResult r;
      sb::detail::read_runner_reply(reply, r);
      REQUIRE(verdict_of(r) == "correct");
      CHECK(std::isnan(r.speedup));
      CHECK(r.speedup_unknown == sb::SpeedupUnknown::not_measured);
      CHECK(r.speedup_unknown_detail.find("no usable median") != std::string::npos);
      CHECK(r.feedback.rfind("Correct (speed not measured: ", 0) == 0);
      CHECK(reason_in_json(r) == "not_measured");
    }
  }
  SECTION("not correct: not_correct") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, [](FakeCall& c) { c.duration_ms = 0.001; });
    REQUIRE(verdict_of(o.result) == "wrong_answer");
    CHECK(o.result.speedup_unknown == sb::SpeedupUnknown::not_correct);
    CHECK_FALSE(o.result.speedup_unknown_detail.empty());
    CHECK(reason_in_json(o.result) == "not_correct");
  }
}

TEST_CASE("harness (fake GPU): special values in the trials catch a kernel that mishandles them",
          "[sandbox][harness]") {
  // Squashes NaN and infinities to 0: right on every ordinary input, wrong on the values a task may
  // declare meaningful.
  const FakeKernel squashing = [](FakeCall& c) {
    const int n = c.i32(4);
    float* x = c.floats(c.pointer(0), static_cast<std::size_t>(n));
    float* y = c.floats(c.pointer(1), static_cast<std::size_t>(n));
    float* out = c.floats(c.pointer(2), static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      const float xi = std::isfinite(x[i]) ? x[i] : 0.0f, yi = std::isfinite(y[i]) ? y[i] : 0.0f;
      out[i] = c.f32(3) * xi + yi;
    }
    c.duration_ms = 1.0;
  };
  SECTION("without special values the mishandling goes unseen") {
    FakeGpu gpu{k_exact};
    CHECK(verdict_of(evaluate(gpu, squashing, fake_task(), reference, false).result) == "correct");
  }
  SECTION("with them, the first trial catches it, and an honest kernel still passes") {
    sb::TaskSpec t = fake_task();
    t.params[0].generator.special = true;
    {
      FakeGpu gpu{k_exact};
      const Outcome o = evaluate(gpu, squashing, t, reference, false);
      INFO(o.reply.dump());
      REQUIRE(verdict_of(o.result) == "wrong_answer");
      CHECK(o.result.detail.find("trial 1") != std::string::npos);
    }
    FakeGpu gpu{k_exact};
    CHECK(verdict_of(evaluate(gpu, honest(1.0), t, reference, false).result) == "correct");
  }
}

TEST_CASE("harness (fake GPU): the timing budget reports fewer runs instead of a timeout", "[sandbox][harness]") {
  SECTION("GPU time: a slow correct kernel stops after the budget") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, honest(400.0), fake_task(), [](FakeCall& c) {
      compute(c);
      c.duration_ms = 800.0;
    });
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(o.result.speedup == Approx(2.0).epsilon(1e-3));
    CHECK(o.result.candidate.runs == 3);  // 3 x 1.2 s > 2 x 1.5 s
    CHECK(o.result.timing_note.find("timed 3 of the minimum 10 runs") != std::string::npos);
  }
  SECTION("wall time: a kernel that really takes 15 ms a run stops before the task's time limit") {
    FakeGpu gpu{k_exact};
    sb::TaskSpec t = fake_task();
    t.time_limit_ms = 1000;
    t.timing.min_reps = 100;
    t.timing.max_reps = 200;
    auto sleepy = [](double ms) {
      return [ms](FakeCall& c) {
        compute(c);
        std::this_thread::sleep_for(std::chrono::milliseconds(15));
        c.duration_ms = ms;
      };
    };
    const auto t0 = std::chrono::steady_clock::now();
    const Outcome o = evaluate(gpu, sleepy(0.5), t, sleepy(1.0));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(seconds < 1.0);
    CHECK(o.result.candidate.runs < 100);
    CHECK(o.result.candidate.runs >= 1);
    CHECK(o.reply.at("timing").at("stopped_early").get<std::string>().find("time limit") != std::string::npos);
  }
}

TEST_CASE("harness (fake GPU): trials that fill the time limit leave the verdict untimed, not a timeout",
          "[sandbox][harness]") {
  FakeGpu gpu{k_exact};
  sb::TaskSpec t = fake_task();
  t.check_sizes.clear();
  t.trials = 1;
  t.time_limit_ms = 500;
  auto sleepy = [](FakeCall& c) {
    compute(c);
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    c.duration_ms = 1.0;
  };
  const Outcome o = evaluate(gpu, sleepy, t, sleepy);
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "correct");
  CHECK(o.result.feedback.rfind("Correct (not timed: the correctness trials took most of the task's time limit", 0) ==
        0);
  CHECK(std::isnan(o.result.speedup));
  for (const auto& op : gpu.log) CHECK_FALSE((op.what == "stage" && op.name == "reload"));
}

TEST_CASE("harness (fake GPU): CUPTI records by external id, by time window, lost, or off", "[sandbox][harness]") {
  SECTION("records without external ids are matched by the timed window") {
    FakeGpu gpu{k_exact};
    gpu.external_ids = false;
    const Outcome o = evaluate(gpu, honest(1.0));
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(o.result.candidate.method == "cupti");
    CHECK(o.result.speedup == Approx(2.0).epsilon(1e-3));
  }
  SECTION("dropped records are counted and reported, and events stand in") {
    FakeGpu gpu{k_exact};
    gpu.drop_every = 7;
    const Outcome o = evaluate(gpu, honest(1.0));
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(o.reply.at("timing").at("dropped_records").get<int>() > 0);
    CHECK(o.result.timing_note.find("CUPTI dropped") != std::string::npos);
    CHECK(o.result.candidate.method == "events");
    CHECK(o.result.speedup == Approx(2.0).epsilon(1e-3));
  }
  SECTION("CUPTI off: events, and the note says why") {
    FakeGpu gpu{k_exact};
    gpu.activity_on = false;
    const Outcome o = evaluate(gpu, honest(1.0));
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(o.result.candidate.method == "events");
    CHECK(o.result.timing_note == "activity off in the fake");
  }
}

TEST_CASE("harness (fake GPU): CUPTI ties a run to its id only with driver API records, and says how runs were matched",
          "[sandbox][harness]") {
  // As on a device: the external correlation record comes only in front of a launch's driver API
  // record. Each evaluation reports how many timed runs (candidate's and reference's) were matched
  // each way, so a machine where ids never arrive is seen, not silently timed by window.
  const auto counts = [](const Outcome& o) {
    const json& t = o.reply.at("timing");
    return std::pair{t.at("matched_by_id").get<int>(), t.at("matched_by_window").get<int>()};
  };
  SECTION("the kinds the real driver enables: every run matched by its id") {
    FakeGpu gpu{k_exact};
    REQUIRE(gpu.driver_api_records);
    const Outcome o = evaluate(gpu, honest(1.0));
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(o.result.candidate.method == "cupti");
    const int runs = 2 * o.reply.at("timing").at("reps").get<int>();
    CHECK(counts(o) == std::pair{runs, 0});
    CHECK(o.result.timing_note.find("time window") == std::string::npos);
  }
  for (const bool api_records : {false, true}) {
    DYNAMIC_SECTION("driver API records " << (api_records ? "on" : "off") << ", external correlation off") {
      FakeGpu gpu{k_exact};
      gpu.driver_api_records = api_records;
      gpu.external_ids = false;
      const Outcome o = evaluate(gpu, honest(1.0));
      INFO(o.reply.dump());
      REQUIRE(verdict_of(o.result) == "correct");
      const int runs = 2 * o.reply.at("timing").at("reps").get<int>();
      CHECK(counts(o) == std::pair{0, runs});
      CHECK(o.result.speedup == Approx(2.0).epsilon(1e-3));
    }
  }
  SECTION("driver API records off: no id arrives, every run is matched by window, and the note says so") {
    FakeGpu gpu{k_exact};
    gpu.driver_api_records = false;
    const Outcome o = evaluate(gpu, honest(1.0));
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(o.result.candidate.method == "cupti");
    const int runs = 2 * o.reply.at("timing").at("reps").get<int>();
    CHECK(runs >= 20);
    CHECK(counts(o) == std::pair{0, runs});
    CHECK_THAT(o.result.timing_note, Catch::Contains("runs matched by time window"));
    CHECK(o.result.speedup == Approx(2.0).epsilon(1e-3));
  }
  SECTION("runs CUPTI could not time count neither way") {
    FakeGpu gpu{k_exact};
    gpu.drop_every = 7;
    const Outcome o = evaluate(gpu, honest(1.0));
    INFO(o.reply.dump());
    REQUIRE(o.result.candidate.method == "events");
    CHECK(counts(o) == std::pair{0, 0});
  }
}

TEST_CASE("runner rules (fake GPU): a device whose kernels reach pageable host memory is refused unless allowed",
          "[sandbox][harness]") {
  const auto request = [] { return untimed_request(); };
  FakeGpu gpu{k_exact};
  gpu.pageable_host_access = true;
  gpu.add_module("fake:candidate", {{"scale_add", honest(1.0)}});
  gpu.add_module("fake:reference", {{"scale_add", reference}});
  for (const char* module : {"fake:candidate", "fake:reference"})
    gpu.set_params(module, "scale_add", FakeGpu::signature_params(fake_task()));
  sb::GpuRunnerConfig config;
  SECTION("refused by default, before anything is loaded, with the option named") {
    const json reply =
        sb::detail::to_json(sb::detail::evaluate_under_runner_rules(request(), gpu, config, [](std::string_view) {}));
    INFO(reply.dump());
    CHECK(reply.at("ok") == false);
    CHECK_THAT(reply.at("error").get<std::string>(),
               Catch::Contains("pageable host memory") && Catch::Contains("--allow-pageable-host-access"));
    CHECK_FALSE(reply.contains("verdict"));
    CHECK(gpu.log.empty());  // no module loaded, no buffer allocated, nothing launched
    sb::EvalResult r;
    sb::detail::read_runner_reply(sb::detail::evaluation_reply_from_json(reply), r);
    CHECK(r.status == sb::EvalStatus::error);
  }
  SECTION("an operator who opted in gets the evaluation") {
    config.allow_pageable_host_access = true;
    const json reply =
        sb::detail::to_json(sb::detail::evaluate_under_runner_rules(request(), gpu, config, [](std::string_view) {}));
    INFO(reply.dump());
    CHECK(reply.at("verdict") == "correct");
  }
  SECTION("a device without pageable access is evaluated as before") {
    gpu.pageable_host_access = false;
    const json reply =
        sb::detail::to_json(sb::detail::evaluate_under_runner_rules(request(), gpu, config, [](std::string_view) {}));
    CHECK(reply.at("verdict") == "correct");
  }
}

TEST_CASE("runner rules (fake GPU): a candidate with much local memory gets the runner replaced after it",
          "[sandbox][harness]") {
  const auto run = [](std::size_t local_bytes, std::size_t threshold, const FakeKernel& kernel) {
    FakeGpu gpu{k_exact};
    gpu.local_bytes["scale_add"] = local_bytes;
    gpu.add_module("fake:candidate", {{"scale_add", kernel}});
    gpu.add_module("fake:reference", {{"scale_add", reference}});
    for (const char* module : {"fake:candidate", "fake:reference"})
      gpu.set_params(module, "scale_add", FakeGpu::signature_params(fake_task()));
    sb::GpuRunnerConfig config;
    config.local_memory_restart_bytes = threshold;
    return sb::detail::to_json(
        sb::detail::evaluate_under_runner_rules(untimed_request(), gpu, config, [](std::string_view) {}));
  };
  const std::size_t default_threshold = sb::GpuRunnerConfig{}.local_memory_restart_bytes;
  CHECK(default_threshold == 64 * 1024);
  SECTION("over the threshold: restart, and why") {
    const json reply = run(default_threshold + 1, default_threshold, honest(1.0));
    INFO(reply.dump());
    CHECK(reply.at("verdict") == "correct");
    CHECK(reply.at("local_bytes_per_thread") == default_threshold + 1);
    CHECK(reply.at("restart") == true);
    CHECK_THAT(reply.at("restart_reason").get<std::string>(), Catch::Contains("local memory"));
  }
  SECTION("a wrong answer with a big stack restarts too: the reservation grew either way") {
    const json reply = run(1 << 20, default_threshold, [](FakeCall& c) { c.duration_ms = 1.0; });
    CHECK(reply.at("verdict") == "wrong_answer");
    CHECK(reply.at("restart") == true);
  }
  SECTION("at or under the threshold: the runner is kept") {
    for (const std::size_t bytes : {std::size_t{0}, std::size_t{4096}, default_threshold}) {
      const json reply = run(bytes, default_threshold, honest(1.0));
      CHECK(reply.at("verdict") == "correct");
      CHECK(reply.value("restart", false) == false);
    }
  }
  SECTION("the threshold is the operator's") { CHECK(run(4096, 1024, honest(1.0)).at("restart") == true); }
}

TEST_CASE("harness (fake GPU): untimed evaluations, and module and launch failures", "[sandbox][harness]") {
  SECTION("untimed: correct after the trials, no reload, no timing") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, honest(1.0), fake_task(), reference, false);
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(o.result.feedback == "Correct (not timed).");
    for (const auto& op : gpu.log) CHECK_FALSE((op.what == "stage" && op.name == "reload"));
    CHECK(gpu.unscrubbed_frees == 0);
  }
  SECTION("a candidate module without the entry point is a runtime error naming the kernel") {
    FakeGpu gpu{k_exact};
    gpu.add_module("fake:candidate", {{"other_name", honest(1.0)}});
    gpu.add_module("fake:reference", {{"scale_add", reference}});
    sb::detail::EvaluationRequest request;  // seed and time as the request's defaults
    request.task = sb::task_to_json(fake_task());
    request.candidate = "fake:candidate";
    request.reference = "fake:reference";
    const json reply = sb::detail::to_json(sb::detail::run_evaluation(request, gpu, [](std::string_view) {}));
    CHECK(reply.at("verdict") == "runtime_error");
    CHECK(reply.at("detail").get<std::string>().find("looking up kernel 'scale_add'") != std::string::npos);
  }
}

TEST_CASE("harness: the input generator gives the same bytes for the same seed, fresh ones for another",
          "[sandbox][harness]") {
  FakeGpu gpu{k_exact};
  sb::detail::DevicePtr p = 0;
  REQUIRE(gpu.allocate(4096 * 4, p) == 0);
  std::vector<float> a(4096), b(4096), c(4096);
  const sb::Generator uniform{sb::GeneratorKind::uniform, -1.0, 1.0};
  sb::detail::generate_inputs_on_host(sb::DType::float32, uniform, 7, a.data(), a.size());
  sb::detail::generate_inputs_on_host(sb::DType::float32, uniform, 7, b.data(), b.size());
  sb::detail::generate_inputs_on_host(sb::DType::float32, uniform, 8, c.data(), c.size());
  CHECK(a == b);
  CHECK(a != c);
  for (float v : a) {
    CHECK(v >= -1.0f);
    CHECK(v < 1.0f);
  }
  std::vector<std::int32_t> r(1000);
  sb::detail::generate_inputs_on_host(sb::DType::int32, {sb::GeneratorKind::randint, 3, 5}, 1, r.data(), r.size());
  std::set<std::int32_t> values(r.begin(), r.end());
  CHECK(values == std::set<std::int32_t>{3, 4, 5});
  std::vector<float> nrm(100000);
  sb::detail::generate_inputs_on_host(sb::DType::float32, {sb::GeneratorKind::normal, 1.0, 2.0}, 3, nrm.data(),
                                      nrm.size());
  double mean = 0, sq = 0;
  for (float v : nrm) mean += v;
  mean /= static_cast<double>(nrm.size());
  for (float v : nrm) sq += (v - mean) * (v - mean);
  CHECK(mean == Approx(1.0).margin(0.03));
  CHECK(std::sqrt(sq / static_cast<double>(nrm.size())) == Approx(2.0).epsilon(0.02));
}

TEST_CASE("harness: NVRTC compiles the input generator for the device, or as PTX for a device it does not know",
          "[sandbox][harness]") {
  std::string image;
  REQUIRE(sb::detail::compile_input_generator(9, 0, image).empty());
  CHECK(image.rfind("\x7f"
                    "ELF",
                    0) == 0);  // a cubin
  image.clear();
  REQUIRE(sb::detail::compile_input_generator(8, 0, image).empty());
  CHECK(image.rfind("\x7f"
                    "ELF",
                    0) == 0);
  image.clear();
  const std::string error = sb::detail::compile_input_generator(1, 0, image);
  CHECK(error.find("sm_10") != std::string::npos);
  CHECK(image.empty());
}

TEST_CASE("timer choice: LEAP_SANDBOX_TIMER=events turns CUPTI off, and says so", "[sandbox][harness]") {
  const char* old = std::getenv("LEAP_SANDBOX_TIMER");
  const std::string saved = old != nullptr ? old : "";
  ::unsetenv("LEAP_SANDBOX_TIMER");
  CHECK(sb::timer_choice().method == "cupti");
  ::setenv("LEAP_SANDBOX_TIMER", "events", 1);
  CHECK(sb::timer_choice().method == "events");
  CHECK(sb::timer_choice().reason.find("LEAP_SANDBOX_TIMER=events") != std::string::npos);
  ::setenv("LEAP_SANDBOX_TIMER", "sundial", 1);
  CHECK(sb::timer_choice().method == "cupti");
  CHECK(sb::timer_choice().reason.find("'sundial'") != std::string::npos);
  if (old != nullptr) ::setenv("LEAP_SANDBOX_TIMER", saved.c_str(), 1);
  else ::unsetenv("LEAP_SANDBOX_TIMER");
}

TEST_CASE("evaluator: which stages are the candidate's, and which modules use the device heap", "[sandbox][harness]") {
  for (const char* s : {"load", "candidate", "reload", "warmup:candidate", "timing:candidate"})
    CHECK(sb::detail::stage::is_candidate_stage(s));
  for (const char* s : {"init", "ready", "reference", "check", "warmup:reference", "timing:reference", ""}) {
    CHECK_FALSE(sb::detail::stage::is_candidate_stage(s));
  }
  CHECK(sb::detail::references_device_malloc(
      ".extern .func  (.param .b64 func_retval0) malloc\n(\n\t.param .b64 malloc_param_0\n)\n;"));
  CHECK(sb::detail::references_device_malloc(".extern .func free\n(\n\t.param .b64 free_param_0\n)\n;"));
  CHECK_FALSE(sb::detail::references_device_malloc(".extern .func  (.param .b32 func_retval0) vprintf\n(\n)\n;"));
  CHECK_FALSE(sb::detail::references_device_malloc(".extern .func  (.param .b64 func_retval0) my_malloc\n(\n)\n;"));
  CHECK_FALSE(sb::detail::references_device_malloc("// malloc in a comment\n.visible .entry k()\n{\n}\n"));
  // An inline-asm comment is not a declaration, whatever it says.
  CHECK_FALSE(sb::detail::references_device_malloc(
      ".visible .entry k()\n{\n\t// begin inline asm\n\t// .extern .func  (.param .b64 func_retval0) malloc\n"
      "\t// end inline asm\n}\n"));
  CHECK_FALSE(sb::detail::references_device_malloc(".extern .funcs malloc\n(\n)\n;"));
  CHECK(sb::detail::references_device_malloc("  .extern .func malloc;\n"));
}

// The PTX holds a candidate's inline-asm text: `.extern .func` planted thousands of times in a comment
// made the old scan read to the end of the PTX once per occurrence (33.5 s for a 100 KB source, while
// the evaluator held the GPU runner's lock). Now one pass, far within the bound, with the same answers.
TEST_CASE("evaluator: the device-malloc scan reads the PTX once, whatever .extern .func text a candidate plants",
          "[sandbox][harness][scans]") {
  constexpr std::size_t k_size = 4u << 20;
  const std::string module_tail =
      "\t// end inline asm\n\tret;\n}\n.extern .func  (.param .b64 func_retval0) MALLOC\n(\n\t.param .b64 "
      "p\n)\n;\n";
  std::string one_line = ".visible .entry k()\n{\n\t// begin inline asm\n\t//";
  while (one_line.size() < k_size) one_line += " .extern .func";
  one_line += "\n";
  std::string many_lines = ".visible .entry k()\n{\n\t// begin inline asm\n";
  while (many_lines.size() < k_size) many_lines += "\t// .extern .func x\n.extern .func\n";
  for (const std::string* ptx : {&one_line, &many_lines}) {
    for (const std::string name : {"malloc", "my_malloc"}) {
      std::string text = *ptx + module_tail;
      text.replace(text.find("MALLOC"), 6, name);
      CHECK(leap_test::finishes_within_cpu_seconds(
          10, [&] { return sb::detail::references_device_malloc(text) == (name == "malloc"); }));
    }
  }
}

TEST_CASE("evaluator: a runner reply becomes the result the policy sees", "[sandbox][harness]") {
  const auto read = [](const json& reply, sb::EvalResult& r) {
    sb::detail::read_runner_reply(sb::detail::evaluation_reply_from_json(reply), r);
  };
  sb::EvalResult timed_wrong;
  read({{"ok", true},
        {"verdict", "wrong_answer"},
        {"detail", "the kernel gave a different result when timed (timed run 3 of 10): out: ..."},
        {"when_timed", true}},
       timed_wrong);
  REQUIRE(timed_wrong.verdict == Verdict::wrong_answer);
  CHECK(timed_wrong.feedback.rfind("Wrong answer when timed: the kernel gave a different result when timed", 0) == 0);
  sb::EvalResult failed;
  read({{"ok", false}, {"error", "GPU initialisation failed: x"}}, failed);
  CHECK(failed.status == sb::EvalStatus::error);
  CHECK_FALSE(failed.verdict.has_value());
  CHECK(failed.error == "GPU initialisation failed: x");
  sb::EvalResult crashed;
  read({{"ok", true}, {"verdict", "runtime_error"}, {"cuda_error", "CUDA_ERROR_ILLEGAL_ADDRESS"}, {"detail", "d"}},
       crashed);
  CHECK(crashed.verdict == Verdict::runtime_error);
  CHECK(crashed.cuda_error == "CUDA_ERROR_ILLEGAL_ADDRESS");
}

// SPDX-License-Identifier: Apache-2.0
// Costs of the DCP machinery next to what it saves (one compile ~30 ms, one GPU evaluation more).
//
//   BM_gate_*          decisions per second over 4096 varied turn-1 groups of G = 8
//   BM_group_buffer    members per second through a GroupBuffer with 1, 2, 4 producer threads and one
//                      consumer; every producer adds one member of every group (the contended case)
//   BM_rollout_*       the loop's own cost per evaluation with a no-op policy and environment:
//                      64 tasks x G = 8 x 3 turns, every group expanded, nothing ever solved, so every
//                      step is 1536 evaluations. Items per second = evaluations per second; the
//                      "per_eval" counter (seconds per evaluation) is the overhead to compare with the 10 us target.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "leap/difficulty_tracker.hpp"
#include "leap/gate_policies.hpp"
#include "leap/group_buffer.hpp"
#include "leap/rollout.hpp"

namespace {

constexpr int group_size = 8;

std::vector<leap::GroupStats> random_groups(std::size_t count) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> verdict(0, 4);
  std::vector<leap::GroupStats> groups(count);
  std::vector<leap::Verdict> turn1(group_size);
  for (auto& group : groups) {
    for (auto& v : turn1) v = leap::all_verdicts[static_cast<std::size_t>(verdict(rng))];
    group = leap::group_stats(turn1);
  }
  return groups;
}

template <class Gate>
void run_group_gate(benchmark::State& state, const Gate& gate) {
  const auto groups = random_groups(4096);
  for (auto _ : state) {
    for (const auto& group : groups) benchmark::DoNotOptimize(gate.assess(group));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(groups.size()));
}

void BM_gate_fail_band(benchmark::State& state) { run_group_gate(state, leap::FailBandGate::leap_default(group_size)); }
void BM_gate_severity_aware(benchmark::State& state) {
  run_group_gate(state, leap::SeverityAwareGate::leap_default(group_size));
}
void BM_gate_first_decisive(benchmark::State& state) {
  run_group_gate(state, leap::first_decisive(leap::SeverityAwareGate::leap_default(group_size),
                                             leap::FailBandGate::leap_default(group_size)));
}

std::vector<leap::GroupCandidate> random_candidates(std::size_t count) {
  const auto groups = random_groups(count);
  std::vector<leap::GroupCandidate> candidates(count);
  for (std::size_t i = 0; i < count; ++i) {
    candidates[i] = {i, i, groups[i], static_cast<std::int64_t>(groups[i].n_fail()) * 2};
  }
  return candidates;
}

void BM_gate_budgeted(benchmark::State& state) {
  const auto candidates = random_candidates(4096);
  std::vector<leap::GateDecision> out(candidates.size());
  const leap::BudgetedGate<> gate{leap::FailBandGate::leap_default(group_size), -1, 4096};
  for (auto _ : state) {
    gate.assess_step(candidates, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(candidates.size()));
}

void BM_gate_difficulty_tracker(benchmark::State& state) {
  const auto candidates = random_candidates(4096);
  std::vector<leap::GateDecision> out(candidates.size());
  leap::DifficultyTracker tracker;
  for (auto _ : state) {
    tracker.assess_step(candidates, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(candidates.size()));
}

void BM_group_buffer(benchmark::State& state) {
  const int producers = static_cast<int>(state.range(0));
  constexpr int groups = 2048;
  constexpr int members = 4;  // per group: 4 producers x 1, 2 x 2, 1 x 4
  for (auto _ : state) {
    leap::GroupBuffer<> buffer({.group_size = members, .max_groups = groups});
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&, p] {
        leap::Outcome outcome;
        for (int g = 0; g < groups; ++g) {
          for (int m = p; m < members; m += producers) buffer.add({static_cast<std::uint64_t>(g), 1}, m, outcome, 1.0);
        }
      });
    }
    std::size_t taken = 0;
    while (taken < static_cast<std::size_t>(groups)) taken += buffer.wait_ready(1).group_count();
    for (auto& thread : threads) thread.join();
  }
  state.SetItemsProcessed(state.iterations() * groups * members);
}

struct NoOpTask {};
struct NoOpPolicy {
  leap::Completion<> complete(const NoOpTask&, const leap::Trajectory<>&, const leap::SampleKey& key) const noexcept {
    return {{}, static_cast<std::uint32_t>(key.turn)};
  }
};
struct NoOpEnvironment {
  leap::Evaluation evaluate(const NoOpTask&, const leap::Completion<>&, const leap::SampleKey&) const {
    return {leap::Verdict::wrong_answer, 0.0, {}, 0};
  }
};

template <class Executor>
void run_rollout(benchmark::State& state, Executor&& executor) {
  const std::vector<NoOpTask> tasks(64);
  leap::RolloutOptions options;
  options.group_size = group_size;
  options.max_turns = 3;
  std::int64_t evaluations = 0;
  for (auto _ : state) {
    auto result = leap::run_step(tasks, NoOpPolicy{}, NoOpEnvironment{}, leap::AlwaysExpand{}, leap::RankAdvantage<>{},
                                 executor, options);
    evaluations += result.metrics.evaluations;
    benchmark::DoNotOptimize(result.samples.data());
  }
  state.SetItemsProcessed(evaluations);
  state.counters["per_eval"] =
      benchmark::Counter(static_cast<double>(evaluations), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_rollout_inline(benchmark::State& state) { run_rollout(state, leap::InlineExecutor{}); }
void BM_rollout_pool(benchmark::State& state) {
  leap::ThreadPool pool(static_cast<unsigned>(state.range(0)));
  run_rollout(state, pool);
}

}  // namespace

BENCHMARK(BM_gate_fail_band);
BENCHMARK(BM_gate_severity_aware);
BENCHMARK(BM_gate_first_decisive);
BENCHMARK(BM_gate_budgeted);
BENCHMARK(BM_gate_difficulty_tracker);
BENCHMARK(BM_group_buffer)->Arg(1)->Arg(2)->Arg(4)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_rollout_inline)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_rollout_pool)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);

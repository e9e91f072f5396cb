// SPDX-License-Identifier: Apache-2.0
// Throughput of the advantage computations on one step's batch of about 1M results (2^20), split
// into groups of G. Items per second = results per second. Compare figures from one run only.
//
//   BM_rank          leap::rank_advantages, batched, KernelOrder::with_speedup_and_tokens() (three keys,
//                    tolerance bands: the most work per match)
//   BM_rank_published          the same with KernelOrder{} (LEAP as published: solved, then turn)
//   BM_rank_turn_weighted      KernelOrder{} with turn_weight = 0.5 (adds the turn-decided correction)
//   BM_rank_oracle   leap::rank_advantages_reference group by group (on fewer results for large G,
//                    since it is O(G^2); items per second stays comparable)
//   BM_grpo, BM_rloo the baselines on a binary reward over the same grouping
//   BM_rank_pairwise / BM_rank_sorted   the two internal paths, to place detail::pairwise_crossover
//   BM_scores        leap::rank_advantages_of_scores on the published order's scalar reward
//   BM_scores_pairwise / BM_scores_sorted   its two paths, to place detail::score_pairwise_max
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "leap/baselines.hpp"
#include "leap/rank_advantage.hpp"
#include "leap/rank_advantage_of_scores.hpp"

namespace {

constexpr std::size_t batch_size = std::size_t{1} << 20;

struct Batch {
  std::vector<leap::Outcome> results;
  std::vector<std::uint32_t> group_ids;
  std::vector<double> rewards;
  std::vector<double> scores;  // max_turns + 1 - solved_turn for a success (max_turns = 3), else 0
  std::vector<double> out;
};

// A plausible step: ~45 % solved at turn 1, some at turns 2-3, log-normal speedups, a few unknown.
Batch make_batch(std::size_t size, std::size_t group_size) {
  std::mt19937_64 rng(42);
  std::discrete_distribution<int> turn({35, 45, 12, 8});  // 0 = unsolved
  std::lognormal_distribution<double> speedup(0.0, 0.6);
  std::uniform_int_distribution<std::uint32_t> tokens(200, 4000);
  std::uniform_int_distribution<int> verdict(0, 3);
  Batch batch;
  batch.results.resize(size);
  batch.group_ids.resize(size);
  batch.rewards.resize(size);
  batch.scores.resize(size);
  batch.out.resize(size);
  for (std::size_t i = 0; i < size; ++i) {
    leap::Outcome& o = batch.results[i];
    o.solved_turn = turn(rng);
    o.best_verdict = o.solved_turn > 0 ? leap::Verdict::correct : leap::all_verdicts[static_cast<std::size_t>(verdict(rng))];
    o.speedup = o.solved_turn > 0 && i % 17 != 0 ? speedup(rng) : std::nan("");
    o.tokens = tokens(rng);
    batch.group_ids[i] = static_cast<std::uint32_t>(i / group_size);
    batch.rewards[i] = o.solved_turn > 0 ? 1.0 : 0.0;
    batch.scores[i] = o.solved_turn > 0 ? 4.0 - o.solved_turn : 0.0;
  }
  return batch;
}

void finish(benchmark::State& state, std::size_t items) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(items));
  state.counters["G"] = static_cast<double>(state.range(0));
}

void rank_batch(benchmark::State& state, const leap::KernelOrder& order) {
  const auto group_size = static_cast<std::size_t>(state.range(0));
  Batch batch = make_batch(batch_size, group_size);
  for (auto _ : state) {
    leap::rank_advantages(batch.results, batch.group_ids, batch.out, order);
    benchmark::DoNotOptimize(batch.out.data());
  }
  finish(state, batch_size);
}

void BM_rank(benchmark::State& state) { rank_batch(state, leap::KernelOrder::with_speedup_and_tokens()); }
void BM_rank_published(benchmark::State& state) { rank_batch(state, leap::KernelOrder{}); }
void BM_rank_turn_weighted(benchmark::State& state) {
  leap::KernelOrder order;
  order.turn_weight = 0.5;
  rank_batch(state, order);
}

void BM_rank_oracle(benchmark::State& state) {
  const auto group_size = static_cast<std::size_t>(state.range(0));
  // O(G^2) per group: keep each iteration near 64M compares.
  const std::size_t groups = std::max<std::size_t>(1, std::min(batch_size / group_size, (std::size_t{1} << 26) / (group_size * group_size)));
  Batch batch = make_batch(groups * group_size, group_size);
  for (auto _ : state) {
    for (std::size_t g = 0; g < groups; ++g) {
      auto advantages = leap::rank_advantages_reference(
          std::span<const leap::Outcome>(batch.results).subspan(g * group_size, group_size),
          leap::KernelOrder::with_speedup_and_tokens());
      benchmark::DoNotOptimize(advantages.data());
    }
  }
  finish(state, groups * group_size);
}

void BM_grpo(benchmark::State& state) {
  Batch batch = make_batch(batch_size, static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    leap::grpo_advantages(batch.rewards, batch.group_ids, batch.out);
    benchmark::DoNotOptimize(batch.out.data());
  }
  finish(state, batch_size);
}

void BM_rloo(benchmark::State& state) {
  Batch batch = make_batch(batch_size, static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    leap::rloo_advantages(batch.rewards, batch.group_ids, batch.out);
    benchmark::DoNotOptimize(batch.out.data());
  }
  finish(state, batch_size);
}

template <bool Sorted>
void BM_rank_path(benchmark::State& state) {
  const auto group_size = static_cast<std::size_t>(state.range(0));
  const std::size_t groups = std::max<std::size_t>(1, (std::size_t{1} << 16) / group_size);
  Batch batch = make_batch(groups * group_size, group_size);
  const leap::KernelOrder order = leap::KernelOrder::with_speedup_and_tokens();
  leap::detail::RankWorkspace workspace;
  std::vector<std::int64_t> scores(group_size);
  for (auto _ : state) {
    for (std::size_t g = 0; g < groups; ++g) {
      const auto group = std::span<const leap::Outcome>(batch.results).subspan(g * group_size, group_size);
      if constexpr (Sorted) {
        leap::detail::sorted_scores(group, order, workspace, scores);
      } else {
        leap::detail::pairwise_scores(group, order, workspace.keys, scores);
      }
      benchmark::DoNotOptimize(scores.data());
    }
  }
  finish(state, groups * group_size);
}

void BM_scores(benchmark::State& state) {
  Batch batch = make_batch(batch_size, static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    leap::rank_advantages_of_scores(batch.scores, batch.group_ids, batch.out);
    benchmark::DoNotOptimize(batch.out.data());
  }
  finish(state, batch_size);
}

template <bool Sorted>
void BM_scores_path(benchmark::State& state) {
  const auto group_size = static_cast<std::size_t>(state.range(0));
  const std::size_t groups = std::max<std::size_t>(1, (std::size_t{1} << 16) / group_size);
  Batch batch = make_batch(groups * group_size, group_size);
  for (std::size_t i = 0; i < batch.scores.size(); ++i) {  // few ties: a distinct offset per member
    batch.scores[i] += 0.001 * static_cast<double>(i % group_size) / static_cast<double>(group_size);
  }
  std::vector<double> sorted;
  std::vector<double> out(group_size);
  for (auto _ : state) {
    for (std::size_t g = 0; g < groups; ++g) {
      const auto group = std::span<const double>(batch.scores).subspan(g * group_size, group_size);
      if constexpr (Sorted) {
        leap::detail::score_group_sorted<double>(group, 0.0, sorted, out);
      } else {
        leap::detail::score_group_pairwise<double>(group, 0.0, out);
      }
      benchmark::DoNotOptimize(out.data());
    }
  }
  finish(state, groups * group_size);
}

void group_sizes(benchmark::internal::Benchmark* b) {
  for (int g : {2, 4, 8, 16, 64, 256, 1024, 4096}) b->Arg(g);
}

}  // namespace

BENCHMARK(BM_rank)->Apply(group_sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_rank_published)->Apply(group_sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_rank_turn_weighted)->Apply(group_sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_rank_oracle)->Apply(group_sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_grpo)->Apply(group_sizes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_rloo)->Apply(group_sizes)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_rank_path, false)->Name("BM_rank_pairwise")->DenseRange(8, 128, 8)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_rank_path, true)->Name("BM_rank_sorted")->DenseRange(8, 128, 8)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_scores)->Apply(group_sizes)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_scores_path, false)->Name("BM_scores_pairwise")->RangeMultiplier(2)->Range(4, 256)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_scores_path, true)->Name("BM_scores_sorted")->RangeMultiplier(2)->Range(4, 256)->Unit(benchmark::kMicrosecond);

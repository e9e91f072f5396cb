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
//
// Trainer mode (BM_trainer_*, G = 8, 2^20 and 2^24 rows): each call gets a batch freshly written
// just before it, as a trainer's step produces one (new contents; at 2^24 rows the inputs no longer
// fit in the last-level cache), and the output buffer is kept from call to call. Only the call is
// timed, in thread CPU time (the machine is shared: memory stalls count, other processes do not).
// BM_trainer_stream_outcomes and BM_trainer_stream_rewards are the streaming limit: a pass that reads
// the same bytes as the rank path (each Outcome and its group id) or the baselines (each reward and
// its id) and writes one double per row, with next to no arithmetic. Every trainer path reports
// ns_per_row and x_stream, its time as a multiple of the matching streaming pass of the same size
// measured earlier in the same run (run the whole BM_trainer_ family together for it).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <time.h>

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

// ---- Trainer mode ------------------------------------------------------------------------------

constexpr std::size_t trainer_group = 8;

// The source of every trainer batch, generated once per size (the largest: 2^24 rows); each call
// copies a rotated window of it into the inputs, so the contents change from call to call.
struct TrainerData {
  std::vector<leap::Outcome> results;
  std::vector<double> rewards;
};

const TrainerData& trainer_source(std::size_t rows) {
  static std::map<std::size_t, TrainerData> sources;
  auto [it, inserted] = sources.try_emplace(rows);
  if (inserted) {
    for (auto& [size, data] : sources) {  // keep one size in memory at a time
      if (size != rows) data = TrainerData{};
    }
    Batch batch = make_batch(rows, trainer_group);
    it->second.results = std::move(batch.results);
    it->second.rewards = std::move(batch.rewards);
  }
  return it->second;
}

// Per-row times of the streaming passes, by (pass, rows), for the x_stream counters.
std::map<std::pair<std::string, std::size_t>, double>& stream_ns_per_row() {
  static std::map<std::pair<std::string, std::size_t>, double> times;
  return times;
}

// CPU time of this thread: the machine is shared, and wall time would count other processes' turns.
double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// Runs call() on a freshly written batch each iteration, timing the call only (thread CPU time).
template <class Refill, class Call>
void trainer_loop(benchmark::State& state, std::size_t rows, Refill&& refill, Call&& call, const char* stream,
                  bool is_stream) {
  std::size_t shift = 0;
  double seconds = 0.0;
  for (auto _ : state) {
    shift = (shift + 4099) % rows;  // a prime stride: a different batch every call
    refill(shift);
    const double start = thread_cpu_seconds();
    call();
    const double elapsed = thread_cpu_seconds() - start;
    state.SetIterationTime(elapsed);
    seconds += elapsed;
  }
  const double ns_per_row = seconds * 1e9 / (static_cast<double>(state.iterations()) * static_cast<double>(rows));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(rows));
  state.counters["ns_per_row"] = ns_per_row;
  if (is_stream) {
    stream_ns_per_row()[{stream, rows}] = ns_per_row;
  } else if (auto it = stream_ns_per_row().find({stream, rows}); it != stream_ns_per_row().end()) {
    state.counters["x_stream"] = ns_per_row / it->second;
  }
}

// Copies the source rotated by shift rows into the inputs; group ids are contiguous runs of 8.
void refill_outcomes(const TrainerData& source, std::size_t shift, std::vector<leap::Outcome>& results) {
  const std::size_t rows = results.size();
  std::copy(source.results.begin() + static_cast<std::ptrdiff_t>(shift), source.results.end(), results.begin());
  std::copy(source.results.begin(), source.results.begin() + static_cast<std::ptrdiff_t>(shift),
            results.begin() + static_cast<std::ptrdiff_t>(rows - shift));
}
void refill_rewards(const TrainerData& source, std::size_t shift, std::vector<double>& rewards) {
  const std::size_t rows = rewards.size();
  std::copy(source.rewards.begin() + static_cast<std::ptrdiff_t>(shift), source.rewards.end(), rewards.begin());
  std::copy(source.rewards.begin(), source.rewards.begin() + static_cast<std::ptrdiff_t>(shift),
            rewards.begin() + static_cast<std::ptrdiff_t>(rows - shift));
}
std::vector<std::uint32_t> contiguous_ids(std::size_t rows) {
  std::vector<std::uint32_t> ids(rows);
  for (std::size_t i = 0; i < rows; ++i) ids[i] = static_cast<std::uint32_t>(i / trainer_group);
  return ids;
}

// The ids are rewritten too (same values): a trainer hands over a fresh id tensor each step.
void refill_ids(std::vector<std::uint32_t>& ids) {
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::uint32_t>(i / trainer_group);
}

// One trainer-mode case: a batch of `Input` rows (outcomes or rewards) with contiguous group ids and
// an output, all rewritten before each call; `call(inputs, ids, out)` is what is timed.
template <class Input, class Call>
void trainer_case(benchmark::State& state, bool is_stream, Call&& call) {
  constexpr bool outcomes = std::is_same_v<Input, leap::Outcome>;
  const auto rows = static_cast<std::size_t>(state.range(0));
  const TrainerData& source = trainer_source(rows);
  std::vector<Input> inputs(rows);
  std::vector<std::uint32_t> ids = contiguous_ids(rows);
  std::vector<double> out(rows);
  trainer_loop(
      state, rows,
      [&](std::size_t shift) {
        if constexpr (outcomes) {
          refill_outcomes(source, shift, inputs);
        } else {
          refill_rewards(source, shift, inputs);
        }
        refill_ids(ids);
      },
      [&] {
        call(inputs, ids, out);
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
      },
      outcomes ? "outcomes" : "rewards", is_stream);
}

using Ids = std::vector<std::uint32_t>;
using Out = std::vector<double>;

void BM_trainer_stream_outcomes(benchmark::State& state) {
  static_assert(sizeof(leap::Outcome) == 24, "the streaming pass reads an Outcome as three 8-byte words");
  trainer_case<leap::Outcome>(state, true, [](const std::vector<leap::Outcome>& results, const Ids& ids, Out& out) {
    // Outcome is three 8-byte words: read them as such (the fastest of the forms tried).
    const auto* words = reinterpret_cast<const std::uint64_t*>(results.data());
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = std::bit_cast<double>(words[3 * i] ^ words[3 * i + 1] ^ words[3 * i + 2] ^ ids[i]);
    }
  });
}

void BM_trainer_stream_rewards(benchmark::State& state) {
  trainer_case<double>(state, true, [](const std::vector<double>& rewards, const Ids& ids, Out& out) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::bit_cast<double>(std::bit_cast<std::uint64_t>(rewards[i]) ^ ids[i]);
  });
}

void trainer_rank(benchmark::State& state, const leap::KernelOrder& order) {
  trainer_case<leap::Outcome>(state, false, [&](const std::vector<leap::Outcome>& results, const Ids& ids, Out& out) {
    leap::rank_advantages(results, ids, std::span<double>(out), order);
  });
}

void BM_trainer_rank_published(benchmark::State& state) { trainer_rank(state, leap::KernelOrder{}); }
void BM_trainer_rank_turn_weighted(benchmark::State& state) {
  leap::KernelOrder order;
  order.turn_weight = 0.5;
  trainer_rank(state, order);
}
void BM_trainer_rank_speedup_tokens(benchmark::State& state) {
  trainer_rank(state, leap::KernelOrder::with_speedup_and_tokens());
}

template <bool Grpo>
void BM_trainer_baseline(benchmark::State& state) {
  trainer_case<double>(state, false, [](const std::vector<double>& rewards, const Ids& ids, Out& out) {
    if constexpr (Grpo) {
      leap::grpo_advantages(rewards, ids, out);
    } else {
      leap::rloo_advantages(rewards, ids, out);
    }
  });
}

// 2^20 rows: as many calls as half a second of timed work takes; 2^24: a fixed 8 calls, so that the
// family stays within a minute or two and about 1.2 GB of memory.
void trainer_sizes(benchmark::internal::Benchmark* b) {
  b->UseManualTime()->Unit(benchmark::kMillisecond);
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

// Trainer mode: each size's streaming passes first, then the paths measured against them.
#define LEAP_TRAINER_FAMILY(rows, iterations)                                                          \
  BENCHMARK(BM_trainer_stream_outcomes)->Arg(rows)->Apply(trainer_sizes)->Iterations(iterations);      \
  BENCHMARK(BM_trainer_stream_rewards)->Arg(rows)->Apply(trainer_sizes)->Iterations(iterations);       \
  BENCHMARK(BM_trainer_rank_published)->Arg(rows)->Apply(trainer_sizes)->Iterations(iterations);       \
  BENCHMARK(BM_trainer_rank_turn_weighted)->Arg(rows)->Apply(trainer_sizes)->Iterations(iterations);   \
  BENCHMARK(BM_trainer_rank_speedup_tokens)->Arg(rows)->Apply(trainer_sizes)->Iterations(iterations);  \
  BENCHMARK_TEMPLATE(BM_trainer_baseline, true)->Name("BM_trainer_grpo")->Arg(rows)->Apply(trainer_sizes)->Iterations(iterations); \
  BENCHMARK_TEMPLATE(BM_trainer_baseline, false)->Name("BM_trainer_rloo")->Arg(rows)->Apply(trainer_sizes)->Iterations(iterations)
LEAP_TRAINER_FAMILY(1 << 20, 100);
LEAP_TRAINER_FAMILY(1 << 24, 8);

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
// Trainer mode (BM_trainer_*, G = 8, 2^20 and 2^24 rows): each call gets a batch with new contents
// and only the call is timed, in thread CPU time (the machine is shared: memory stalls count, other
// processes do not). Two residencies of the inputs:
//   BM_trainer_<path>        hot: written just before the call, as when a trainer computes advantages
//                            right after its rewards; at 2^20 rows they are still in the last-level
//                            cache, at 2^24 they no longer fit. The output buffer is kept.
//   BM_trainer_cold_<path>   cold: a ring of batches (inputs, ids and output), each rewritten after its
//                            call and used again after at least twice the last-level cache has been
//                            written, so both sizes read from memory and their per-row times compare.
// BM_trainer_*stream_outcomes and *stream_rewards are the streaming limit: a pass that reads the same
// bytes as the rank path (each Outcome and its group id) or the baselines (each reward and its id)
// and writes one double per row, with next to no arithmetic. Every trainer path reports ns_per_row
// and x_stream, its time as a multiple of the matching streaming pass of the same size and residency
// measured earlier in the same run (run the whole BM_trainer_ family together for it).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <time.h>
#include <unistd.h>

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
    o.best_verdict =
        o.solved_turn > 0 ? leap::Verdict::correct : leap::all_verdicts[static_cast<std::size_t>(verdict(rng))];
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
  const std::size_t groups =
      std::max<std::size_t>(1, std::min(batch_size / group_size, (std::size_t{1} << 26) / (group_size * group_size)));
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
  TrainerData& data = sources[rows];
  if (data.results.size() != rows) {       // not made yet, or let go for another size
    for (auto& [size, other] : sources) {  // keep one size in memory at a time
      if (size != rows) other = TrainerData{};
    }
    Batch batch = make_batch(rows, trainer_group);
    data.results = std::move(batch.results);
    data.rewards = std::move(batch.rewards);
  }
  return data;
}

// Where a call finds its inputs. `hot`: written just before the call, as when a trainer computes
// advantages right after its rewards; they sit in the last-level cache when they fit (2^20 rows do,
// 2^24 rows do not). `cold`: written a ring-turn earlier, with at least twice the last-level cache
// written in between, so that every size reads its inputs from memory and per-row times compare.
enum class Residency { hot, cold };

const char* residency_name(Residency residency) { return residency == Residency::hot ? "hot" : "cold"; }

// Per-row times of the streaming passes, by (pass, residency, rows), for the x_stream counters.
std::map<std::tuple<std::string, Residency, std::size_t>, double>& stream_ns_per_row() {
  static std::map<std::tuple<std::string, Residency, std::size_t>, double> times;
  return times;
}

// CPU time of this thread: the machine is shared, and wall time would count other processes' turns.
double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

std::size_t last_level_cache_bytes() {
  const long reported = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return reported > 0 ? static_cast<std::size_t>(reported) : std::size_t{256} << 20;
}

// Copies the source rotated by shift rows into the inputs; group ids are contiguous runs of 8.
template <class Input>
void refill_rotated(const std::vector<Input>& source, std::size_t shift, std::vector<Input>& inputs) {
  const std::size_t rows = inputs.size();
  std::copy(source.begin() + static_cast<std::ptrdiff_t>(shift), source.end(), inputs.begin());
  std::copy(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(shift),
            inputs.begin() + static_cast<std::ptrdiff_t>(rows - shift));
}

// The ids are rewritten too (same values): a trainer hands over a fresh id tensor each step.
void refill_ids(std::vector<std::uint32_t>& ids) {
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::uint32_t>(i / trainer_group);
}

// One call's buffers: its inputs (outcomes or rewards), their group ids and the output.
template <class Input>
struct TrainerSlot {
  std::vector<Input> inputs;
  std::vector<std::uint32_t> ids;
  std::vector<double> out;

  explicit TrainerSlot(std::size_t rows) : inputs(rows), ids(rows), out(rows) {}
  std::size_t bytes() const { return inputs.size() * (sizeof(Input) + sizeof(std::uint32_t) + sizeof(double)); }
};

// One trainer-mode case: `call(inputs, ids, out)` on a batch of `Input` rows with contiguous group
// ids, new contents every call (a rotated window of the source), timed alone in thread CPU time.
// Hot: one slot, rewritten just before each call (the output is kept from call to call). Cold: a
// ring of slots, each rewritten just after its call and used again a ring-turn later.
template <class Input, class Call>
void trainer_case(benchmark::State& state, Residency residency, bool is_stream, Call&& call) {
  constexpr bool outcomes = std::is_same_v<Input, leap::Outcome>;
  const auto rows = static_cast<std::size_t>(state.range(0));
  const TrainerData& source = trainer_source(rows);
  const auto& source_inputs = [&]() -> const std::vector<Input>& {
    if constexpr (outcomes) {
      return source.results;
    } else {
      return source.rewards;
    }
  }();

  std::vector<TrainerSlot<Input>> ring;
  ring.emplace_back(rows);
  if (residency == Residency::cold) {
    const std::size_t turn_bytes = 2 * last_level_cache_bytes();
    const std::size_t slots = std::max<std::size_t>(2, (turn_bytes + ring[0].bytes() - 1) / ring[0].bytes() + 1);
    while (ring.size() < slots) ring.emplace_back(rows);
  }
  std::size_t shift = 0;
  const auto refill = [&](TrainerSlot<Input>& slot) {
    shift = (shift + 4099) % rows;  // a prime stride: a different batch every call
    refill_rotated(source_inputs, shift, slot.inputs);
    refill_ids(slot.ids);
  };
  if (residency == Residency::cold) {
    for (auto& slot : ring) refill(slot);
  }

  double seconds = 0.0;
  std::size_t next = 0;
  for (auto _ : state) {
    TrainerSlot<Input>& slot = ring[next];
    next = (next + 1) % ring.size();
    if (residency == Residency::hot) refill(slot);
    const double start = thread_cpu_seconds();
    call(slot.inputs, slot.ids, slot.out);
    benchmark::DoNotOptimize(slot.out.data());
    benchmark::ClobberMemory();
    const double elapsed = thread_cpu_seconds() - start;
    state.SetIterationTime(elapsed);
    seconds += elapsed;
    if (residency == Residency::cold) refill(slot);
  }

  const double ns_per_row = seconds * 1e9 / (static_cast<double>(state.iterations()) * static_cast<double>(rows));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(rows));
  state.SetLabel(residency_name(residency));
  state.counters["ns_per_row"] = ns_per_row;
  state.counters["ring"] = static_cast<double>(ring.size());
  const std::tuple<std::string, Residency, std::size_t> key{outcomes ? "outcomes" : "rewards", residency, rows};
  if (is_stream) {
    stream_ns_per_row()[key] = ns_per_row;
  } else if (auto it = stream_ns_per_row().find(key); it != stream_ns_per_row().end()) {
    state.counters["x_stream"] = ns_per_row / it->second;
  }
}

using Ids = std::vector<std::uint32_t>;
using Out = std::vector<double>;

void trainer_stream_outcomes(benchmark::State& state, Residency residency) {
  static_assert(sizeof(leap::Outcome) == 24, "the streaming pass reads an Outcome as three 8-byte words");
  trainer_case<leap::Outcome>(
      state, residency, true, [](const std::vector<leap::Outcome>& results, const Ids& ids, Out& out) {
        // Outcome is three 8-byte words: read them as such (the fastest of the forms tried).
        const auto* words = reinterpret_cast<const std::uint64_t*>(results.data());
        for (std::size_t i = 0; i < out.size(); ++i) {
          out[i] = std::bit_cast<double>(words[3 * i] ^ words[3 * i + 1] ^ words[3 * i + 2] ^ ids[i]);
        }
      });
}

void trainer_stream_rewards(benchmark::State& state, Residency residency) {
  trainer_case<double>(state, residency, true, [](const std::vector<double>& rewards, const Ids& ids, Out& out) {
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = std::bit_cast<double>(std::bit_cast<std::uint64_t>(rewards[i]) ^ ids[i]);
  });
}

void trainer_rank(benchmark::State& state, Residency residency, const leap::KernelOrder& order) {
  trainer_case<leap::Outcome>(state, residency, false,
                              [&](const std::vector<leap::Outcome>& results, const Ids& ids, Out& out) {
                                leap::rank_advantages(results, ids, std::span<double>(out), order);
                              });
}

void trainer_rank_published(benchmark::State& state, Residency residency) {
  trainer_rank(state, residency, leap::KernelOrder{});
}
void trainer_rank_turn_weighted(benchmark::State& state, Residency residency) {
  leap::KernelOrder order;
  order.turn_weight = 0.5;
  trainer_rank(state, residency, order);
}
void trainer_rank_speedup(benchmark::State& state, Residency residency) {
  trainer_rank(state, residency, leap::KernelOrder::with_speedup(0.05));
}
void trainer_rank_speedup_tokens(benchmark::State& state, Residency residency) {
  trainer_rank(state, residency, leap::KernelOrder::with_speedup_and_tokens());
}

template <bool Grpo>
void trainer_baseline(benchmark::State& state, Residency residency) {
  trainer_case<double>(state, residency, false, [](const std::vector<double>& rewards, const Ids& ids, Out& out) {
    if constexpr (Grpo) {
      leap::grpo_advantages(rewards, ids, out);
    } else {
      leap::rloo_advantages(rewards, ids, out);
    }
  });
}

// The trainer family at one size: BM_trainer_<path> (hot inputs), then BM_trainer_cold_<path>; the
// streaming passes come first in each, since the others are measured against them. 2^20 rows run 100
// calls; 2^24 rows a fixed 8, which keeps the family within a few minutes and about 1.2 GB.
void register_trainer_family(std::int64_t rows, std::int64_t iterations) {
  using Path = void (*)(benchmark::State&, Residency);
  const std::pair<const char*, Path> paths[] = {
      {"stream_outcomes", trainer_stream_outcomes},
      {"stream_rewards", trainer_stream_rewards},
      {"rank_published", trainer_rank_published},
      {"rank_turn_weighted", trainer_rank_turn_weighted},
      {"rank_speedup", trainer_rank_speedup},
      {"rank_speedup_tokens", trainer_rank_speedup_tokens},
      {"grpo", trainer_baseline<true>},
      {"rloo", trainer_baseline<false>},
  };
  for (const Residency residency : {Residency::hot, Residency::cold}) {
    const std::string prefix = residency == Residency::hot ? "BM_trainer_" : "BM_trainer_cold_";
    for (const auto& [name, path] : paths) {
      benchmark::RegisterBenchmark((prefix + name).c_str(), path, residency)
          ->Arg(rows)
          ->Iterations(iterations)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
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
BENCHMARK_TEMPLATE(BM_scores_path, false)
    ->Name("BM_scores_pairwise")
    ->RangeMultiplier(2)
    ->Range(4, 256)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_scores_path, true)
    ->Name("BM_scores_sorted")
    ->RangeMultiplier(2)
    ->Range(4, 256)
    ->Unit(benchmark::kMicrosecond);

// Trainer mode, registered after the families above so that a whole run keeps this order.
[[maybe_unused]] const bool trainer_families_registered = [] {
  register_trainer_family(1 << 20, 100);
  register_trainer_family(1 << 24, 8);
  return true;
}();

// SPDX-License-Identifier: Apache-2.0
// The public contract of shared/DESIGN.md, name by name and signature by signature: if one of these
// stops compiling or changes its defaults, code written against the contract breaks.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "leap/leap.hpp"

using namespace leap;

static_assert(std::is_same_v<std::underlying_type_t<Verdict>, std::uint8_t>);
static_assert(std::is_same_v<std::underlying_type_t<Expansion>, std::uint8_t>);
static_assert(std::is_aggregate_v<Outcome> && std::is_aggregate_v<KernelOrder> && std::is_aggregate_v<GroupStats> &&
              std::is_aggregate_v<FailBandGate> && std::is_aggregate_v<GrpoOptions>);

// Every function of the contract, through a pointer of exactly the contract's type.
[[maybe_unused]] std::vector<double> (*const one_group)(std::span<const Outcome>,
                                                        const KernelOrder&) = &rank_advantages<KernelOrder>;
[[maybe_unused]] std::vector<double> (*const oracle)(std::span<const Outcome>,
                                                     const KernelOrder&) = &rank_advantages_reference<KernelOrder>;
[[maybe_unused]] void (*const batched)(std::span<const Outcome>, std::span<const std::uint32_t>, std::span<double>,
                                       const KernelOrder&) = &rank_advantages<KernelOrder>;
[[maybe_unused]] std::vector<double> (*const credit)(double, int, int, double) = &turn_advantages;
[[maybe_unused]] void (*const grpo)(std::span<const double>, std::span<const std::uint32_t>, std::span<double>,
                                    GrpoOptions) = &grpo_advantages;
[[maybe_unused]] void (*const rloo)(std::span<const double>, std::span<const std::uint32_t>,
                                    std::span<double>) = &rloo_advantages;
[[maybe_unused]] void (*const by_scores)(std::span<const double>, std::span<const std::uint32_t>, std::span<double>,
                                         double) = &rank_advantages_of_scores;
[[maybe_unused]] GroupStats (*const stats_of)(std::span<const Verdict>) = &group_stats;
[[maybe_unused]] int (KernelOrder::*const compare_member)(const Outcome&, const Outcome&) const = &KernelOrder::compare;
[[maybe_unused]] KernelOrder (*const turns_only_preset)() = &KernelOrder::turns_only;
[[maybe_unused]] KernelOrder (*const with_speedup_preset)(double) = &KernelOrder::with_speedup;
[[maybe_unused]] Expansion (FailBandGate::*const decide_member)(const GroupStats&) const = &FailBandGate::decide;

TEST_CASE("contract: enumerators in the contract's order", "[contract]") {
  CHECK(static_cast<int>(Verdict::compile_error) == 0);
  CHECK(static_cast<int>(Verdict::runtime_error) == 1);
  CHECK(static_cast<int>(Verdict::timeout) == 2);
  CHECK(static_cast<int>(Verdict::wrong_answer) == 3);
  CHECK(static_cast<int>(Verdict::correct) == 4);
  CHECK(static_cast<int>(Expansion::expand) == 0);
  CHECK(static_cast<int>(Expansion::prune_easy) == 1);
  CHECK(static_cast<int>(Expansion::prune_catastrophic) == 2);
  CHECK(static_cast<int>(Expansion::prune_budget) == 3);
}

TEST_CASE("contract: defaults", "[contract]") {
  const Outcome outcome;
  CHECK(outcome.solved_turn == 0);
  CHECK(outcome.best_verdict == Verdict::compile_error);
  CHECK(std::isnan(outcome.speedup));
  CHECK(outcome.tokens == 0u);
  const KernelOrder order;
  CHECK(order.by_turn);
  CHECK_FALSE(order.by_severity);
  CHECK(order.speedup_tolerance == -1.0);
  CHECK(order.token_tolerance == -1.0);
  CHECK(order.tokens_only_when_solved);
  const GrpoOptions options;
  CHECK(options.epsilon == 1e-6);
  CHECK(options.scale_by_std);
}

TEST_CASE("contract: KernelOrder{} is LEAP as published, turns_only() its name, with_speedup() the band",
          "[contract]") {
  const KernelOrder published;
  const KernelOrder named = KernelOrder::turns_only();
  CHECK((named.by_turn == published.by_turn && named.by_severity == published.by_severity &&
         named.speedup_tolerance == published.speedup_tolerance && named.token_tolerance == published.token_tolerance &&
         named.tokens_only_when_solved == published.tokens_only_when_solved));
  const KernelOrder speed = KernelOrder::with_speedup();
  CHECK(speed.speedup_tolerance == 0.05);
  CHECK(speed.token_tolerance == -1.0);
  CHECK(speed.by_turn);
}

TEST_CASE("contract: aggregates initialise in the contract's member order", "[contract]") {
  const Outcome outcome{2, Verdict::correct, 1.5, 700};
  CHECK(outcome.solved_turn == 2);
  CHECK(outcome.speedup == 1.5);
  const GroupStats stats{8, 3, 2, 1, 1, 1};
  CHECK(stats.n_wrong_answer == 2);
  CHECK(stats.n_compile_error == 1);
  const FailBandGate gate{4, 7};
  CHECK(gate.decide(stats) == Expansion::expand);  // 5 failures, in [4, 7]
  CHECK(gate.decide({8, 6, 2, 0, 0, 0}) == Expansion::prune_easy);
  CHECK(gate.decide({8, 0, 0, 0, 0, 8}) == Expansion::prune_catastrophic);
  const GrpoOptions dr_grpo{1e-6, false};
  CHECK_FALSE(dr_grpo.scale_by_std);
}

TEST_CASE("contract: the calls as written in DESIGN.md", "[contract]") {
  const std::vector<Outcome> group = {{1, Verdict::correct, 2.0, 10}, {2, Verdict::correct, 1.0, 10}, {}};
  CHECK(rank_advantages(group) == rank_advantages_reference(group));
  CHECK(rank_advantages(group) == std::vector<double>{1.0, 0.0, -1.0});
  CHECK(rank_advantages(group, KernelOrder::turns_only()) == std::vector<double>{1.0, 0.0, -1.0});
  CHECK(rank_advantages(group, KernelOrder::with_speedup()) == std::vector<double>{1.0, 0.0, -1.0});
  const std::vector<std::uint32_t> ids = {9, 9, 9};
  std::vector<double> out(3);
  rank_advantages(group, ids, out);
  CHECK(out == rank_advantages(group));
  CHECK(turn_advantages(0.5, 2, 2, 0.5) == std::vector<double>{0.25, 0.5});
  const std::vector<Verdict> turn1 = {Verdict::correct, Verdict::timeout, Verdict::compile_error, Verdict::correct};
  CHECK(group_stats(turn1) == GroupStats{4, 2, 0, 0, 1, 1});
}

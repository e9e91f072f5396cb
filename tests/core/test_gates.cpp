// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "leap/difficulty_tracker.hpp"
#include "leap/gate.hpp"
#include "leap/gate_policies.hpp"

using Catch::Matchers::Contains;
using leap::Expansion;
using leap::GateDecision;
using leap::GateReason;
using leap::GroupStats;

namespace {

// A group of `size` with `correct` successes; the failures are of one kind.
GroupStats group(int size, int correct, leap::Verdict failure = leap::Verdict::wrong_answer) {
  std::vector<leap::Verdict> verdicts(static_cast<std::size_t>(size), failure);
  for (int i = 0; i < correct; ++i) verdicts[static_cast<std::size_t>(i)] = leap::Verdict::correct;
  return leap::group_stats(verdicts);
}

GroupStats mixed(int correct, int wrong, int runtime, int timeout, int compile) {
  return GroupStats{correct + wrong + runtime + timeout + compile, correct, wrong, runtime, timeout, compile};
}

// Prunes groups of exactly `size` members and abstains on the rest: a custom gate for composition tests.
struct PruneSize {
  int size;
  GateDecision assess(const GroupStats& stats) const {
    if (stats.size == size) return {Expansion::prune_catastrophic, GateReason::too_many_failures};
    return {Expansion::expand, GateReason::abstain};
  }
};

}  // namespace

static_assert(std::is_aggregate_v<leap::FailBandGate>);
static_assert(std::is_aggregate_v<leap::GroupStats>);
static_assert(leap::group_gate<leap::FailBandGate> && leap::group_gate<leap::SeverityAwareGate>);
static_assert(leap::group_gate<leap::AlwaysExpand> && leap::group_gate<leap::NeverExpand>);
static_assert(leap::step_gate<leap::BudgetedGate<>> && !leap::group_gate<leap::BudgetedGate<>>);
static_assert(leap::step_gate<leap::DifficultyTracker> && !leap::step_gate<const leap::DifficultyTracker>);
static_assert(leap::gate_policy<PruneSize>);

TEST_CASE("group_stats counts every verdict", "[gates]") {
  using V = leap::Verdict;
  const std::vector<V> verdicts = {V::correct, V::wrong_answer,  V::compile_error, V::compile_error,
                                   V::timeout, V::runtime_error, V::correct,       V::wrong_answer};
  CHECK(leap::group_stats(verdicts) == GroupStats{8, 2, 2, 1, 1, 2});
  CHECK(leap::group_stats({}) == GroupStats{0, 0, 0, 0, 0, 0});
  CHECK(GroupStats{8, 2, 2, 1, 1, 2}.n_fail() == 6);
}

TEST_CASE("FailBandGate decides by the failure count of turn 1", "[gates]") {
  const leap::FailBandGate gate{4, 7};
  CHECK(gate.decide(group(8, 8)) == Expansion::prune_easy);  // N_fail 0
  CHECK(gate.decide(group(8, 5)) == Expansion::prune_easy);  // N_fail 3 < t_min
  CHECK(gate.decide(group(8, 4)) == Expansion::expand);      // N_fail 4 = t_min
  CHECK(gate.decide(group(8, 1)) == Expansion::expand);      // N_fail 7 = t_max
  CHECK(gate.decide(group(8, 0)) == Expansion::prune_catastrophic);
  CHECK(gate.assess(group(8, 5)) == GateDecision{Expansion::prune_easy, GateReason::too_few_failures});
  CHECK(gate.assess(group(8, 2)) == GateDecision{Expansion::expand, GateReason::in_band});
  CHECK(gate.assess(group(8, 0)) == GateDecision{Expansion::prune_catastrophic, GateReason::too_many_failures});
  CHECK(gate.assess(GroupStats{}) == GateDecision{Expansion::prune_easy, GateReason::empty_group});
}

TEST_CASE("LEAP's default band: t_min = ceil(G / 2), t_max = G - 1", "[gates]") {
  const auto eight = leap::FailBandGate::leap_default(8);
  CHECK(eight.t_min == 4);
  CHECK(eight.t_max == 7);
  const auto five = leap::FailBandGate::leap_default(5);
  CHECK(five.t_min == 3);
  CHECK(five.t_max == 4);
  const auto one = leap::FailBandGate::leap_default(1);  // an empty band: a group of one never expands
  CHECK(one.decide(group(1, 0)) == Expansion::prune_catastrophic);
  CHECK(one.decide(group(1, 1)) == Expansion::prune_easy);
  CHECK_THROWS_WITH(leap::FailBandGate::leap_default(0), Contains("group_size (0) must be >= 1"));
}

TEST_CASE("FailBandGate rejects contradictory bands, naming the values", "[gates][errors]") {
  CHECK_THROWS_WITH((leap::FailBandGate{5, 3}.decide(group(8, 4))), Contains("t_min (5) > t_max (3) + 1"));
  CHECK_THROWS_AS((leap::FailBandGate{5, 3}.validate()), std::invalid_argument);
  CHECK_THROWS_WITH((leap::FailBandGate{-1, 3}.decide(group(8, 4))), Contains("t_min (-1) is negative"));
  // t_min = t_max + 1 is an empty band, not an error.
  const leap::FailBandGate empty{4, 3};
  for (int correct = 0; correct <= 8; ++correct) CHECK(empty.decide(group(8, correct)) != Expansion::expand);
}

TEST_CASE("the baselines always and never expand", "[gates]") {
  CHECK(leap::AlwaysExpand{}.assess(group(8, 0)) == GateDecision{Expansion::expand, GateReason::always_expand});
  CHECK(leap::AlwaysExpand{}.decide(group(8, 8)) == Expansion::expand);
  CHECK(leap::NeverExpand{}.assess(group(8, 4)) == GateDecision{Expansion::prune_budget, GateReason::never_expand});
}

TEST_CASE("SeverityAwareGate prunes above the band only when compile errors dominate", "[gates]") {
  const auto gate = leap::SeverityAwareGate::leap_default(8);
  CHECK(gate.assess(mixed(0, 3, 0, 0, 5)) ==
        GateDecision{Expansion::prune_catastrophic, GateReason::mostly_compile_errors});
  CHECK(gate.assess(mixed(0, 4, 0, 0, 4)) ==
        GateDecision{Expansion::expand, GateReason::fixable_failures});  // half is not most
  CHECK(gate.assess(mixed(0, 8, 0, 0, 0)) == GateDecision{Expansion::expand, GateReason::fixable_failures});
  CHECK(gate.assess(mixed(0, 0, 4, 4, 0)) == GateDecision{Expansion::expand, GateReason::fixable_failures});
  // Inside and below the band it is the band.
  CHECK(gate.assess(mixed(2, 0, 0, 0, 6)) == GateDecision{Expansion::expand, GateReason::in_band});
  CHECK(gate.assess(mixed(6, 0, 0, 0, 2)) == GateDecision{Expansion::prune_easy, GateReason::too_few_failures});
  const leap::SeverityAwareGate strict{leap::FailBandGate{4, 7}, 0.0};  // any compile error prunes
  CHECK(strict.decide(mixed(0, 7, 0, 0, 1)) == Expansion::prune_catastrophic);
  CHECK_THROWS_WITH((leap::SeverityAwareGate{leap::FailBandGate{4, 7}, 1.5}.decide(mixed(0, 8, 0, 0, 0))),
                    Contains("compile_error_share (1.5) is outside [0, 1]"));
}

TEST_CASE("all_gates expands only when every decisive gate agrees", "[gates][compose]") {
  const auto gate = leap::all_gates(leap::FailBandGate{4, 7}, PruneSize{6});
  CHECK(gate.assess(group(8, 2)) == GateDecision{Expansion::expand, GateReason::in_band});
  CHECK(gate.assess(group(8, 6)) == GateDecision{Expansion::prune_easy, GateReason::too_few_failures});
  CHECK(gate.assess(group(6, 2)) == GateDecision{Expansion::prune_catastrophic, GateReason::too_many_failures});
  const auto never = leap::all_gates(leap::AlwaysExpand{}, leap::NeverExpand{});
  CHECK(never.assess(group(8, 4)) == GateDecision{Expansion::prune_budget, GateReason::never_expand});
  CHECK_FALSE(leap::all_gates(PruneSize{3}).assess(group(8, 4)).decisive());
}

TEST_CASE("first_decisive takes the first gate with an opinion", "[gates][compose]") {
  const auto gate = leap::first_decisive(PruneSize{6}, leap::FailBandGate{4, 7});
  CHECK(gate.assess(group(6, 2)) == GateDecision{Expansion::prune_catastrophic, GateReason::too_many_failures});
  CHECK(gate.assess(group(8, 2)) == GateDecision{Expansion::expand, GateReason::in_band});
  CHECK(gate.assess(group(8, 8)).expansion == Expansion::prune_easy);
  CHECK(leap::first_decisive(PruneSize{3}, PruneSize{4}).assess(group(8, 4)).reason == GateReason::abstain);
}

namespace {
std::vector<leap::GroupCandidate> candidates(const std::vector<GroupStats>& stats, int max_turns) {
  std::vector<leap::GroupCandidate> out;
  for (std::size_t i = 0; i < stats.size(); ++i) {
    out.push_back({i, 100 + i, stats[i], static_cast<std::int64_t>(stats[i].n_fail()) * (max_turns - 1)});
  }
  return out;
}
std::vector<GateDecision> run(auto& gate, const std::vector<leap::GroupCandidate>& groups) {
  std::vector<GateDecision> out(groups.size());
  leap::assess_groups(gate, std::span<const leap::GroupCandidate>(groups), std::span<GateDecision>(out));
  return out;
}
constexpr GateDecision expand_in_band{Expansion::expand, GateReason::in_band};
constexpr GateDecision over_budget{Expansion::prune_budget, GateReason::over_budget};
}  // namespace

TEST_CASE("BudgetedGate with a group limit expands the groups with most expected repairs", "[gates][budget]") {
  // expected repairs with the default odds: 0: 4 wrong = 2.0; 1: 6 compile = 0.9; 2: 7 wrong = 3.5; 3: easy
  const auto groups =
      candidates({mixed(4, 4, 0, 0, 0), mixed(2, 0, 0, 0, 6), mixed(1, 7, 0, 0, 0), mixed(7, 1, 0, 0, 0)}, 3);
  leap::BudgetedGate<> gate{leap::FailBandGate{4, 7}, 2};
  const auto decisions = run(gate, groups);
  CHECK(decisions[0] == expand_in_band);
  CHECK(decisions[1] == over_budget);
  CHECK(decisions[2] == expand_in_band);
  CHECK(decisions[3] ==
        GateDecision{Expansion::prune_easy, GateReason::too_few_failures});  // the inner gate's no stays
  CHECK(leap::RepairOdds{}.expected_repairs(groups[2].stats) == Approx(3.5));
}

TEST_CASE("BudgetedGate with an evaluation limit prefers value per evaluation and fills the budget",
          "[gates][budget]") {
  // costs (failures x 2): 0: 8 (density 0.25), 1: 12 (0.075), 2: 14 (0.25, more value), 3: 8 compile (0.075)
  const auto groups =
      candidates({mixed(4, 4, 0, 0, 0), mixed(2, 0, 0, 0, 6), mixed(1, 7, 0, 0, 0), mixed(4, 0, 0, 0, 4)}, 3);
  leap::BudgetedGate<> gate{leap::FailBandGate{4, 7}, -1, 20};
  const auto decisions = run(gate, groups);
  CHECK(decisions[2] == expand_in_band);  // 14 of 20, first by density then value
  CHECK(decisions[0] == over_budget);     // 8 more would exceed 20
  CHECK(decisions[1] == over_budget);     // 12 would too
  CHECK(decisions[3] == over_budget);
  leap::BudgetedGate<> roomy{leap::FailBandGate{4, 7}, -1, 22};
  const auto more = run(roomy, groups);
  CHECK(more[2] == expand_in_band);
  CHECK(more[0] == expand_in_band);  // 14 + 8 = 22 fits exactly
  CHECK(more[1] == over_budget);
  CHECK(more[3] == over_budget);
  leap::BudgetedGate<> skipping{leap::FailBandGate{4, 7}, -1, 16};  // 14 first; 8 skipped... nothing else fits
  const auto skipped = run(skipping, groups);
  CHECK(skipped[2] == expand_in_band);
  CHECK(skipped[0] == over_budget);
}

TEST_CASE("BudgetedGate without limits is its inner gate, zero limits prune all", "[gates][budget]") {
  const auto groups = candidates({mixed(4, 4, 0, 0, 0), mixed(0, 0, 0, 0, 8)}, 3);
  leap::BudgetedGate<> unlimited{leap::FailBandGate{4, 7}};
  CHECK(run(unlimited, groups) ==
        std::vector<GateDecision>{expand_in_band, {Expansion::prune_catastrophic, GateReason::too_many_failures}});
  leap::BudgetedGate<leap::AlwaysExpand> none{{}, 0};
  CHECK(run(none, groups) == std::vector<GateDecision>{over_budget, over_budget});
  leap::BudgetedGate<> bad_odds{leap::FailBandGate{4, 7}, 1, -1, leap::RepairOdds{2.0}};
  CHECK_THROWS_WITH(run(bad_odds, groups), Contains("wrong_answer (2) is outside [0, 1]"));
}

TEST_CASE("DifficultyTracker is the paper's band until a task has history", "[gates][tracker]") {
  leap::DifficultyTracker tracker;
  CHECK(tracker.observe(1, group(8, 4)) == expand_in_band);
  CHECK(tracker.observe(2, group(8, 5)) == GateDecision{Expansion::prune_easy, GateReason::too_few_failures});
  CHECK(tracker.observe(3, group(8, 0)) == GateDecision{Expansion::prune_catastrophic, GateReason::too_many_failures});
  CHECK(tracker.size() == 3);
  CHECK(tracker.difficulty(1) == leap::TaskDifficulty{0.5, 1});
  CHECK_FALSE(tracker.difficulty(9).has_value());
}

TEST_CASE("DifficultyTracker follows each task's smoothed failure rate", "[gates][tracker]") {
  leap::DifficultyTracker tracker({.smoothing = 0.5, .easy_below = 0.5, .hopeless_at = 1.0, .min_history = 2});
  // A task the policy never solves is hopeless once it has history.
  tracker.observe(7, group(8, 0));
  CHECK(tracker.observe(7, group(8, 0)) == GateDecision{Expansion::prune_catastrophic, GateReason::tracked_hopeless});
  CHECK(tracker.difficulty(7)->fail_rate == 1.0);
  // All failed this time, but the task was solved before: worth debugging (the fixed band would prune it).
  tracker.observe(8, group(8, 4));                                                                         // 0.5
  CHECK(tracker.observe(8, group(8, 0)) == GateDecision{Expansion::expand, GateReason::tracked_in_band});  // 0.75
  CHECK(tracker.difficulty(8)->fail_rate == 0.75);
  // Half failed this time, but the task has become easy for the policy.
  tracker.observe(9, group(8, 8));                                                                          // 0
  CHECK(tracker.observe(9, group(8, 3)) == GateDecision{Expansion::prune_easy, GateReason::tracked_easy});  // 0.3125
  // Nothing failed: nothing to debug, whatever the history.
  CHECK(tracker.observe(7, group(8, 8)) == GateDecision{Expansion::prune_easy, GateReason::too_few_failures});
  CHECK(tracker.observe(7, GroupStats{}) == GateDecision{Expansion::prune_easy, GateReason::empty_group});
  CHECK(tracker.difficulty(7)->observations == 3);  // the empty group was not recorded
}

TEST_CASE("DifficultyTracker state: peek, snapshot, restore, step order", "[gates][tracker]") {
  leap::DifficultyTracker tracker;
  tracker.observe(5, group(8, 2));
  const auto before = tracker.snapshot();
  CHECK(tracker.peek(5, group(8, 0)) == GateDecision{Expansion::expand, GateReason::tracked_in_band});
  CHECK(tracker.snapshot() == before);  // peek records nothing

  // A step observes its groups in order; the same task twice is two observations.
  const std::vector<leap::GroupCandidate> step = {
      {0, 5, group(8, 0), 14}, {1, 6, group(8, 4), 8}, {2, 5, group(8, 0), 14}};
  std::vector<GateDecision> out(3);
  tracker.assess_step(step, out);
  CHECK(out[0] == GateDecision{Expansion::expand, GateReason::tracked_in_band});  // 0.875
  CHECK(out[1] == expand_in_band);
  CHECK(out[2] == GateDecision{Expansion::expand, GateReason::tracked_in_band});  // 0.9375
  CHECK(tracker.difficulty(5) == leap::TaskDifficulty{0.9375, 3});

  leap::DifficultyTracker copy;
  copy.restore(tracker.snapshot());
  CHECK(copy.snapshot() == tracker.snapshot());
  CHECK(copy.observe(5, group(8, 1)) == tracker.observe(5, group(8, 1)));
  const std::vector<std::pair<std::uint64_t, leap::TaskDifficulty>> twice = {{1, {0.5, 1}}, {1, {0.5, 1}}};
  CHECK_THROWS_WITH(copy.restore(twice), Contains("task 1 appears twice"));
  const std::vector<std::pair<std::uint64_t, leap::TaskDifficulty>> bad = {{4, {1.5, 1}}};
  CHECK_THROWS_WITH(copy.restore(bad), Contains("task 4 has fail_rate 1.5"));
  copy.clear();
  CHECK(copy.size() == 0);
}

TEST_CASE("DifficultyTracker rejects bad options", "[gates][tracker][errors]") {
  CHECK_THROWS_WITH(leap::DifficultyTracker({.smoothing = 0.0}), Contains("smoothing (0) is outside (0, 1]"));
  CHECK_THROWS_WITH(leap::DifficultyTracker({.easy_below = 0.8, .hopeless_at = 0.6}), Contains("hopeless_at (0.59999"));
  CHECK_THROWS_WITH(leap::DifficultyTracker({.min_history = 0}), Contains("min_history (0) must be >= 1"));
}

TEST_CASE("assess_groups runs group gates one group at a time", "[gates]") {
  const auto groups = candidates({group(8, 4), group(8, 8)}, 3);
  leap::FailBandGate band{4, 7};
  CHECK(run(band, groups) ==
        std::vector<GateDecision>{expand_in_band, {Expansion::prune_easy, GateReason::too_few_failures}});
  std::vector<GateDecision> wrong_size(1);
  CHECK_THROWS_WITH(
      leap::assess_groups(band, std::span<const leap::GroupCandidate>(groups), std::span<GateDecision>(wrong_size)),
      Contains("out.size() (1) != groups.size() (2)"));
}

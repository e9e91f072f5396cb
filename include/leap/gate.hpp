// SPDX-License-Identifier: Apache-2.0
// Difficulty-Conditioned Pruning: the vocabulary of gates and the paper's fail-band gate.
//
// A gate looks at the turn-1 verdicts of one task's group and decides whether the group is worth
// debugging turns (expand) or is trained single-turn (one of the prune decisions). Every decision
// carries the reason it was taken, so step metrics can say *why* compute was or was not spent.
//
// Two kinds of gate:
//   group_gate  `GateDecision assess(const GroupStats&) const`: one group at a time, stateless
//               (FailBandGate, AlwaysExpand, NeverExpand, SeverityAwareGate, compositions).
//   step_gate   `void assess_step(std::span<const GroupCandidate>, std::span<GateDecision>)`: sees
//               every group of a step at once and may keep state across steps (BudgetedGate,
//               DifficultyTracker). Every group_gate can be used where a step_gate is expected.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "leap/detail/error.hpp"
#include "leap/verdict.hpp"

namespace leap {

// What happens to a group after turn 1.
enum class Expansion : std::uint8_t { expand, prune_easy, prune_catastrophic, prune_budget };

inline constexpr std::array<Expansion, 4> all_expansions = {Expansion::expand, Expansion::prune_easy,
                                                            Expansion::prune_catastrophic, Expansion::prune_budget};

constexpr std::string_view to_string(Expansion expansion) noexcept {
  switch (expansion) {
    case Expansion::expand: return "expand";
    case Expansion::prune_easy: return "prune_easy";
    case Expansion::prune_catastrophic: return "prune_catastrophic";
    case Expansion::prune_budget: return "prune_budget";
  }
  return "unknown";
}

// Why a gate decided what it did. Each policy documents the reasons it gives.
enum class GateReason : std::uint8_t {
  in_band,                // expand: the failure count lies in [t_min, t_max]
  too_few_failures,       // prune_easy: fewer than t_min failures, the group is already learnt
  too_many_failures,      // prune_catastrophic: more than t_max failures
  mostly_compile_errors,  // prune_catastrophic: above the band and the failures are mostly compile errors
  fixable_failures,       // expand: above the band, but the failures are mostly one fix away
  always_expand,          // expand: the AlwaysExpand baseline
  never_expand,           // prune_budget: the NeverExpand baseline (no debugging turns at all)
  over_budget,            // prune_budget: the step's expansion budget was spent on more valuable groups
  tracked_easy,           // prune_easy: the task's smoothed failure rate is below the tracker's band
  tracked_hopeless,       // prune_catastrophic: the task has failed every recent sample
  tracked_in_band,        // expand: the task's smoothed failure rate lies in the tracker's band
  abstain,                // no opinion: first_decisive() asks the next gate
  empty_group,            // prune_easy: a group with no members has nothing to debug
};

inline constexpr std::size_t gate_reason_count = static_cast<std::size_t>(GateReason::empty_group) + 1;

constexpr std::string_view to_string(GateReason reason) noexcept {
  switch (reason) {
    case GateReason::in_band: return "in_band";
    case GateReason::too_few_failures: return "too_few_failures";
    case GateReason::too_many_failures: return "too_many_failures";
    case GateReason::mostly_compile_errors: return "mostly_compile_errors";
    case GateReason::fixable_failures: return "fixable_failures";
    case GateReason::always_expand: return "always_expand";
    case GateReason::never_expand: return "never_expand";
    case GateReason::over_budget: return "over_budget";
    case GateReason::tracked_easy: return "tracked_easy";
    case GateReason::tracked_hopeless: return "tracked_hopeless";
    case GateReason::tracked_in_band: return "tracked_in_band";
    case GateReason::abstain: return "abstain";
    case GateReason::empty_group: return "empty_group";
  }
  return "unknown";
}

// A decision and its reason.
struct GateDecision {
  Expansion expansion = Expansion::expand;
  GateReason reason = GateReason::in_band;

  constexpr bool expands() const noexcept { return expansion == Expansion::expand; }
  constexpr bool decisive() const noexcept { return reason != GateReason::abstain; }
  friend constexpr bool operator==(const GateDecision&, const GateDecision&) = default;
};

// Turn-1 verdict counts of one group.
struct GroupStats {
  int size = 0;
  int n_correct = 0;
  int n_wrong_answer = 0;
  int n_runtime_error = 0;
  int n_timeout = 0;
  int n_compile_error = 0;

  constexpr int n_fail() const noexcept { return size - n_correct; }
  friend constexpr bool operator==(const GroupStats&, const GroupStats&) = default;
};

inline GroupStats group_stats(std::span<const Verdict> turn1) {
  GroupStats stats{static_cast<int>(turn1.size()), 0, 0, 0, 0, 0};
  for (Verdict verdict : turn1) {
    switch (verdict) {
      case Verdict::correct: ++stats.n_correct; break;
      case Verdict::wrong_answer: ++stats.n_wrong_answer; break;
      case Verdict::runtime_error: ++stats.n_runtime_error; break;
      case Verdict::timeout: ++stats.n_timeout; break;
      case Verdict::compile_error: ++stats.n_compile_error; break;
    }
  }
  return stats;
}

// What a step gate sees of each group: its position in the step, the task's id (stable across steps,
// for gates that track tasks), the turn-1 counts, and the most evaluations expanding it can cost.
struct GroupCandidate {
  std::size_t index = 0;
  std::uint64_t task_id = 0;
  GroupStats stats{};
  std::int64_t max_extra_evaluations = 0;  // failures x (max_turns - 1)
};

template <class Gate>
concept group_gate = requires(const Gate& gate, const GroupStats& stats) {
  { gate.assess(stats) } -> std::same_as<GateDecision>;
};

template <class Gate>
concept step_gate = requires(Gate& gate, std::span<const GroupCandidate> groups, std::span<GateDecision> out) {
  gate.assess_step(groups, out);
};

// Any gate over a whole step: a step gate as it is, a group gate one group at a time.
template <class Gate>
concept gate_policy = group_gate<Gate> || step_gate<Gate>;

template <class Gate>
void assess_groups(Gate& gate, std::span<const GroupCandidate> groups, std::span<GateDecision> out) {
  static_assert(gate_policy<Gate>,
                "leap: a gate must provide `leap::GateDecision assess(const leap::GroupStats&) const` (one group at "
                "a time) or `void assess_step(std::span<const leap::GroupCandidate>, std::span<leap::GateDecision>)` "
                "(a whole step)");
  detail::require_same_size("assess_groups", "out", out.size(), "groups", groups.size());
  if constexpr (step_gate<Gate>) {
    gate.assess_step(groups, out);
  } else {
    for (std::size_t i = 0; i < groups.size(); ++i) out[i] = gate.assess(groups[i].stats);
  }
}

// The paper's gate. With N_fail = size - n_correct of the turn-1 group:
//   N_fail < t_min  prune_easy          (too_few_failures)
//   N_fail > t_max  prune_catastrophic  (too_many_failures)
//   otherwise       expand              (in_band)
//   size == 0       prune_easy          (empty_group)
// Use it when you want LEAP as published; leap_default(G) gives its best ablation, expanding only
// groups where at least half failed and at least one succeeded. t_min = t_max + 1 is a valid empty band
// (never expand); t_min > t_max + 1 would make some N_fail both easy and catastrophic and throws.
struct FailBandGate {
  int t_min;
  int t_max;

  // LEAP's defaults for group size G: t_min = ceil(G / 2), t_max = G - 1.
  static FailBandGate leap_default(int group_size) {
    if (group_size < 1) {
      detail::throw_invalid_argument("leap::FailBandGate::leap_default: group_size (", group_size, ") must be >= 1");
    }
    return FailBandGate{(group_size + 1) / 2, group_size - 1};
  }

  void validate() const {
    if (t_min < 0) detail::throw_invalid_argument("leap::FailBandGate: t_min (", t_min, ") is negative");
    if (t_min > t_max + 1) {
      detail::throw_invalid_argument("leap::FailBandGate: t_min (", t_min, ") > t_max (", t_max,
                                     ") + 1: a failure count would be both easy and catastrophic");
    }
  }

  GateDecision assess(const GroupStats& stats) const {
    validate();
    if (stats.size <= 0) return {Expansion::prune_easy, GateReason::empty_group};
    const int n_fail = stats.n_fail();
    if (n_fail < t_min) return {Expansion::prune_easy, GateReason::too_few_failures};
    if (n_fail > t_max) return {Expansion::prune_catastrophic, GateReason::too_many_failures};
    return {Expansion::expand, GateReason::in_band};
  }

  Expansion decide(const GroupStats& stats) const { return assess(stats).expansion; }
};

// Expands every group: the "unpruned multi-turn" baseline of the paper's comparison. Use it to measure
// what pruning saves, or when evaluations are cheap.
struct AlwaysExpand {
  constexpr GateDecision assess(const GroupStats&) const noexcept {
    return {Expansion::expand, GateReason::always_expand};
  }
  constexpr Expansion decide(const GroupStats& stats) const noexcept { return assess(stats).expansion; }
};

// Expands nothing: single-turn training, the other baseline. Its decision is prune_budget (a budget
// of zero debugging turns), not prune_easy, so metrics never mistake it for a judgement of difficulty.
struct NeverExpand {
  constexpr GateDecision assess(const GroupStats&) const noexcept {
    return {Expansion::prune_budget, GateReason::never_expand};
  }
  constexpr Expansion decide(const GroupStats& stats) const noexcept { return assess(stats).expansion; }
};

}  // namespace leap

// SPDX-License-Identifier: Apache-2.0
// Gate policies beyond the paper's band (leap/gate.hpp has the vocabulary and that band): severity-aware
// catastrophe, composition, and a step budget.
// The per-task difficulty tracker has its own header (leap/difficulty_tracker.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "leap/detail/error.hpp"
#include "leap/gate.hpp"

namespace leap {

// The fail band, but "catastrophic" means the failures are mostly compile errors: above the band, a
// group is pruned only when compile errors make up more than `compile_error_share` of its failures
// (mostly_compile_errors); otherwise it is expanded (fixable_failures), since a wrong answer or a crash
// is often one fix away while a model that cannot produce compiling code rarely recovers from a log.
// Use it when all-failed groups are common early in training and you do not want to discard the ones
// that nearly work. Inside and below the band it decides exactly as the band does.
struct SeverityAwareGate {
  FailBandGate band;
  double compile_error_share = 0.5;  // in [0, 1]; 0.5 = "more than half are compile errors"

  static SeverityAwareGate leap_default(int group_size) { return {FailBandGate::leap_default(group_size), 0.5}; }

  void validate() const {
    band.validate();
    if (!(compile_error_share >= 0.0 && compile_error_share <= 1.0)) {
      detail::throw_invalid_argument("leap::SeverityAwareGate: compile_error_share (", compile_error_share,
                                     ") is outside [0, 1]");
    }
  }

  GateDecision assess(const GroupStats& stats) const {
    validate();
    const GateDecision by_band = band.assess(stats);
    if (by_band.expansion != Expansion::prune_catastrophic || stats.n_fail() <= 0) return by_band;
    const double share = static_cast<double>(stats.n_compile_error) / static_cast<double>(stats.n_fail());
    if (share > compile_error_share) return {Expansion::prune_catastrophic, GateReason::mostly_compile_errors};
    return {Expansion::expand, GateReason::fixable_failures};
  }

  Expansion decide(const GroupStats& stats) const { return assess(stats).expansion; }
};

// Expands a group only when every gate agrees; otherwise the first gate that said no decides (with its
// reason). Abstaining gates are ignored; when all abstain the result abstains. Use it to add a veto to
// a policy, e.g. all_gates(FailBandGate{4, 7}, my_cost_veto).
template <group_gate... Gates>
struct AllOfGates {
  static_assert(sizeof...(Gates) > 0, "leap::AllOfGates: compose at least one gate");
  std::tuple<Gates...> gates;

  // Validates every part that can be validated, so a bad band fails before a step spends anything.
  void validate() const {
    std::apply([](const auto&... gate) { (detail::validate_if_able(gate), ...); }, gates);
  }

  GateDecision assess(const GroupStats& stats) const {
    GateDecision result{Expansion::expand, GateReason::abstain};
    bool have_yes = false;
    bool have_no = false;
    std::apply(
        [&](const auto&... gate) {
          const auto visit = [&](const auto& one) {
            if (have_no) return;
            const GateDecision decision = one.assess(stats);
            if (!decision.decisive()) return;
            if (!decision.expands()) {
              result = decision;
              have_no = true;
            } else if (!have_yes) {
              result = decision;
              have_yes = true;
            }
          };
          (visit(gate), ...);
        },
        gates);
    return result;
  }

  Expansion decide(const GroupStats& stats) const { return assess(stats).expansion; }
};

// Asks the gates in order and takes the first decision that is not `abstain`; when all abstain, the
// last gate's decision. Use it to put a special case in front of a general policy, e.g. a gate that
// prunes tasks you know are broken and abstains otherwise, followed by FailBandGate.
template <group_gate... Gates>
struct FirstDecisiveGate {
  static_assert(sizeof...(Gates) > 0, "leap::FirstDecisiveGate: compose at least one gate");
  std::tuple<Gates...> gates;

  // Validates every part that can be validated, so a bad band fails before a step spends anything.
  void validate() const {
    std::apply([](const auto&... gate) { (detail::validate_if_able(gate), ...); }, gates);
  }

  GateDecision assess(const GroupStats& stats) const {
    GateDecision result{Expansion::expand, GateReason::abstain};
    bool decided = false;
    std::apply(
        [&](const auto&... gate) {
          const auto visit = [&](const auto& one) {
            if (decided) return;
            result = one.assess(stats);
            decided = result.decisive();
          };
          (visit(gate), ...);
        },
        gates);
    return result;
  }

  Expansion decide(const GroupStats& stats) const { return assess(stats).expansion; }
};

template <group_gate... Gates>
AllOfGates<Gates...> all_gates(Gates... gates) {
  return {std::tuple<Gates...>(std::move(gates)...)};
}

template <group_gate... Gates>
FirstDecisiveGate<Gates...> first_decisive(Gates... gates) {
  return {std::tuple<Gates...>(std::move(gates)...)};
}

// How likely one debugging turn repairs a failure of each kind; the budgeted gate's notion of value.
// Defaults are a prior, not a measurement: wrong answers are closest to working, compile errors furthest.
struct RepairOdds {
  double wrong_answer = 0.5;
  double timeout = 0.3;
  double runtime_error = 0.3;
  double compile_error = 0.15;

  void validate() const {
    const auto check = [](const char* name, double p) {
      if (!(p >= 0.0 && p <= 1.0))
        detail::throw_invalid_argument("leap::RepairOdds: ", name, " (", p, ") is outside [0, 1]");
    };
    check("wrong_answer", wrong_answer);
    check("timeout", timeout);
    check("runtime_error", runtime_error);
    check("compile_error", compile_error);
  }

  // Expected number of the group's turn-1 failures that debugging turns it into successes.
  double expected_repairs(const GroupStats& stats) const noexcept {
    return wrong_answer * stats.n_wrong_answer + timeout * stats.n_timeout + runtime_error * stats.n_runtime_error +
           compile_error * stats.n_compile_error;
  }
};

// A step gate that caps what one step may spend on debugging turns. The inner gate proposes; among the
// groups it would expand, the most valuable are expanded while they fit the budget, and the rest are
// pruned with prune_budget (over_budget). A group's value is the expected number of repaired
// trajectories (RepairOdds::expected_repairs): each repair turns a loser of the rank tournament into a
// winner, which is the learning signal expansion buys. Order of preference:
//   max_evaluations set: value per evaluation it may cost (failures x (max_turns - 1)), then value;
//   only max_groups set: value, then value per evaluation;
//   ties: the earlier group in the step.
// Groups that do not fit are skipped and smaller ones still tried, so the budget is used fully. A
// negative limit means no limit. Use it when compile and GPU time per step are fixed, e.g. a sandbox
// pool of known throughput, so a step's wall time does not depend on how hard the batch happened to be.
template <group_gate Inner = FailBandGate>
struct BudgetedGate {
  Inner inner;
  std::int64_t max_groups = -1;
  std::int64_t max_evaluations = -1;
  RepairOdds odds{};

  void validate() const {
    detail::validate_if_able(inner);
    odds.validate();
  }

  void assess_step(std::span<const GroupCandidate> groups, std::span<GateDecision> out) const {
    odds.validate();
    detail::require_same_size("BudgetedGate::assess_step", "out", out.size(), "groups", groups.size());
    std::vector<std::size_t> wanted;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      out[i] = inner.assess(groups[i].stats);
      if (out[i].expands()) wanted.push_back(i);
    }
    // Sort keys computed once: (value per evaluation, value) or (value, value per evaluation).
    const bool by_evaluations = max_evaluations >= 0;
    std::vector<std::pair<double, double>> keys(groups.size());
    for (std::size_t i : wanted) {
      const double value = odds.expected_repairs(groups[i].stats);
      const auto cost = groups[i].max_extra_evaluations;
      const double density = cost > 0 ? value / static_cast<double>(cost) : value;
      keys[i] = by_evaluations ? std::pair{density, value} : std::pair{value, density};
    }
    std::stable_sort(wanted.begin(), wanted.end(), [&](std::size_t a, std::size_t b) { return keys[a] > keys[b]; });
    std::int64_t groups_used = 0;
    std::int64_t evaluations_used = 0;
    for (std::size_t i : wanted) {
      const std::int64_t cost = std::max<std::int64_t>(groups[i].max_extra_evaluations, 0);
      const bool fits_groups = max_groups < 0 || groups_used < max_groups;
      const bool fits_evaluations = max_evaluations < 0 || evaluations_used + cost <= max_evaluations;
      if (fits_groups && fits_evaluations) {
        ++groups_used;
        evaluations_used += cost;
      } else {
        out[i] = {Expansion::prune_budget, GateReason::over_budget};
      }
    }
  }
};

}  // namespace leap

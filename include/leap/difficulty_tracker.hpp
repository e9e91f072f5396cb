// SPDX-License-Identifier: Apache-2.0
// DifficultyTracker: a step gate that remembers each task's turn-1 failure rate across steps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "leap/detail/error.hpp"
#include "leap/gate.hpp"

namespace leap {

// What the tracker knows of one task.
struct TaskDifficulty {
  double fail_rate = 0.0;         // exponential moving average of the turn-1 failure fraction
  std::int64_t observations = 0;  // groups seen
  friend constexpr bool operator==(const TaskDifficulty&, const TaskDifficulty&) = default;
};

struct DifficultyTrackerOptions {
  double smoothing = 0.5;    // weight of the newest group in the moving average, in (0, 1]
  double easy_below = 0.5;   // smoothed failure rate below this: prune_easy (the paper's t_min = G/2)
  double hopeless_at = 1.0;  // smoothed failure rate at or above this: prune_catastrophic
  int min_history = 2;       // groups a task needs before its average is trusted over the current group
};

// The paper's band decides from one group of G samples, a noisy estimate of how hard the task is for
// the current policy (at a true failure rate of 0.9, all 8 of a group fail 43 % of the time). The
// tracker decides from the task's moving average instead, so the band follows the policy as it learns:
//   nothing failed this step         prune_easy          too_few_failures (nothing to debug)
//   fewer than min_history groups    the band on this group's fraction: < easy_below too_few_failures,
//                                    >= hopeless_at too_many_failures, else in_band
//   smoothed rate < easy_below       prune_easy          tracked_easy
//   smoothed rate >= hopeless_at     prune_catastrophic  tracked_hopeless (failed every recent sample)
//   otherwise                        expand              tracked_in_band
// The thresholds are fractions, so the defaults (the paper's band) hold for every group size. Use it
// when tasks recur across steps; for tasks seen once it is the paper's rule. The state is a plain map
// from task id to TaskDifficulty; snapshot() and restore() checkpoint it, and updates are deterministic
// given the order of observations (assess_step observes a step's groups in order).
class DifficultyTracker {
 public:
  explicit DifficultyTracker(DifficultyTrackerOptions options = {}) : options_(options) { validate(options_); }

  static void validate(const DifficultyTrackerOptions& options) {
    if (!(options.smoothing > 0.0 && options.smoothing <= 1.0)) {
      detail::throw_invalid_argument("leap::DifficultyTracker: smoothing (", options.smoothing, ") is outside (0, 1]");
    }
    if (!(options.easy_below >= 0.0 && options.easy_below <= 1.0)) {
      detail::throw_invalid_argument("leap::DifficultyTracker: easy_below (", options.easy_below,
                                     ") is outside [0, 1]");
    }
    if (!(options.hopeless_at >= options.easy_below && options.hopeless_at <= 1.0)) {
      detail::throw_invalid_argument("leap::DifficultyTracker: hopeless_at (", options.hopeless_at,
                                     ") must lie in [easy_below (", options.easy_below, "), 1]");
    }
    if (options.min_history < 1) {
      detail::throw_invalid_argument("leap::DifficultyTracker: min_history (", options.min_history, ") must be >= 1");
    }
  }

  // Records the task's turn-1 group and decides on it.
  GateDecision observe(std::uint64_t task_id, const GroupStats& stats) {
    if (stats.size <= 0) return {Expansion::prune_easy, GateReason::empty_group};
    TaskDifficulty& state = tasks_[task_id];
    state = updated(state, stats);
    return decide(state, stats);
  }

  // The decision observe() would take, without recording anything.
  GateDecision peek(std::uint64_t task_id, const GroupStats& stats) const {
    if (stats.size <= 0) return {Expansion::prune_easy, GateReason::empty_group};
    const auto found = tasks_.find(task_id);
    return decide(updated(found == tasks_.end() ? TaskDifficulty{} : found->second, stats), stats);
  }

  void assess_step(std::span<const GroupCandidate> groups, std::span<GateDecision> out) {
    detail::require_same_size("DifficultyTracker::assess_step", "out", out.size(), "groups", groups.size());
    for (std::size_t i = 0; i < groups.size(); ++i) out[i] = observe(groups[i].task_id, groups[i].stats);
  }

  std::optional<TaskDifficulty> difficulty(std::uint64_t task_id) const {
    const auto found = tasks_.find(task_id);
    if (found == tasks_.end()) return std::nullopt;
    return found->second;
  }

  // Every tracked task, by increasing id.
  std::vector<std::pair<std::uint64_t, TaskDifficulty>> snapshot() const { return {tasks_.begin(), tasks_.end()}; }

  // Replaces the state with a snapshot. Throws std::invalid_argument for a rate outside [0, 1], a negative
  // observation count or a repeated task id.
  void restore(std::span<const std::pair<std::uint64_t, TaskDifficulty>> state) {
    std::map<std::uint64_t, TaskDifficulty> restored;
    for (const auto& [task_id, difficulty] : state) {
      if (!(difficulty.fail_rate >= 0.0 && difficulty.fail_rate <= 1.0) || difficulty.observations < 0) {
        detail::throw_invalid_argument("leap::DifficultyTracker::restore: task ", task_id, " has fail_rate ",
                                       difficulty.fail_rate, " and observations ", difficulty.observations,
                                       " (need [0, 1] and >= 0)");
      }
      if (!restored.emplace(task_id, difficulty).second) {
        detail::throw_invalid_argument("leap::DifficultyTracker::restore: task ", task_id, " appears twice");
      }
    }
    tasks_ = std::move(restored);
  }

  std::size_t size() const noexcept { return tasks_.size(); }
  void clear() noexcept { tasks_.clear(); }
  const DifficultyTrackerOptions& options() const noexcept { return options_; }

 private:
  TaskDifficulty updated(TaskDifficulty state, const GroupStats& stats) const {
    const double fraction = static_cast<double>(stats.n_fail()) / static_cast<double>(stats.size);
    // rate + s * (fraction - rate) keeps a run of identical fractions exactly at that fraction (1.0 stays 1.0).
    state.fail_rate =
        state.observations == 0 ? fraction : state.fail_rate + options_.smoothing * (fraction - state.fail_rate);
    ++state.observations;
    return state;
  }

  GateDecision decide(const TaskDifficulty& state, const GroupStats& stats) const {
    if (stats.n_fail() <= 0) return {Expansion::prune_easy, GateReason::too_few_failures};
    if (state.observations < options_.min_history) {
      const double fraction = static_cast<double>(stats.n_fail()) / static_cast<double>(stats.size);
      if (fraction < options_.easy_below) return {Expansion::prune_easy, GateReason::too_few_failures};
      if (fraction >= options_.hopeless_at) return {Expansion::prune_catastrophic, GateReason::too_many_failures};
      return {Expansion::expand, GateReason::in_band};
    }
    if (state.fail_rate < options_.easy_below) return {Expansion::prune_easy, GateReason::tracked_easy};
    if (state.fail_rate >= options_.hopeless_at) return {Expansion::prune_catastrophic, GateReason::tracked_hopeless};
    return {Expansion::expand, GateReason::tracked_in_band};
  }

  DifficultyTrackerOptions options_;
  std::map<std::uint64_t, TaskDifficulty> tasks_;
};

}  // namespace leap

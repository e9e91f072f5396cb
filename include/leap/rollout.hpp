// SPDX-License-Identifier: Apache-2.0
// The multi-turn rollout loop of LEAP: one training step over a batch of tasks.
//
//   1. turn 1 for G samples of every task;
//   2. group_stats of each task's turn-1 verdicts, and the gate's decision per group;
//   3. for expanded groups, every trajectory not yet solved gets the environment's feedback and another
//      turn, up to max_turns (a solved trajectory stops);
//   4. the Outcome of each trajectory, the advantage estimator per group (RankAdvantage<>{}, LEAP as
//      published, by default), and turn_advantages per trajectory;
//   5. one training sample per turn, and the step's metrics.
//
// What a trainer plugs in:
//   policy       Completion<P> complete(const Task&, const Trajectory<P>& so_far, const SampleKey&)
//                so_far.turns.back().feedback is the last feedback (empty on turn 1). The payload type P
//                is Policy::payload_type when declared, else NoPayload.
//   environment  Evaluation evaluate(const Task&, const Completion<P>&, const SampleKey&)
// With a ThreadPool both are called concurrently from several threads and must be safe for that.
//
// Determinism: each call gets a SampleKey naming (task, sample, turn) and a seed derived from those and
// RolloutOptions::seed/step alone; every evaluation writes its own slot and all reductions run in index
// order. So given a deterministic policy and environment, the result (all but metrics.wall_seconds) is
// the same for every executor and thread count.
//
// Failures: a policy or environment that throws does not abort the step. A policy that throws gives a
// runtime_error turn whose feedback names the task, sample and turn and carries the message (counted in
// metrics.policy_errors). Misuse (bad options, a bad gate) throws std::invalid_argument before any
// evaluation runs.
//
// Environment failures are never the candidate's failure. An environment that throws, or that returns
// an Evaluation with environment_failure set (it could not judge: a lost, dead-lettered or timed-out
// request, no GPU, a harness fault), has not judged the completion. The same completion is evaluated
// again, up to RolloutOptions::environment_retries more times (SampleKey::attempt counts them; the
// policy is not called again). When no attempt gives a verdict the turn is recorded with
// Turn::environment_failure set and the trajectory is masked:
//   - it ends there (an environment that failed gives no feedback to debug from);
//   - a turn-1 failure is left out of its group's GroupStats, so the gate sees the G' members that were
//     judged (GroupStats::size = G');
//   - it is left out of the rank: the estimator runs over the judged trajectories alone, so under
//     RankAdvantage a judged member's advantage is (wins - losses) / (G' - 1) among the G' judged ones,
//     and a group with one judged member gets 0 for it, as any group of one does;
//   - its advantage is 0, on every turn, and its TrainingSamples carry masked = true: a trainer drops
//     them from the loss (a loss mask), it must not train them as failures;
//   - metrics count environment_errors (every failed attempt), environment_retries and
//     masked_trajectories; accuracy_at_turn and advantage_rms are over the judged trajectories only.
// An environment must still return every verdict the candidate's own text determines (no kernel, a
// compile error, a crash of its kernel): were those environment failures, a candidate could choose to
// be masked instead of losing.
#pragma once

#include <chrono>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <ranges>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "leap/advantage_estimator.hpp"
#include "leap/detail/error.hpp"
#include "leap/detail/mix64.hpp"
#include "leap/executor.hpp"
#include "leap/gate.hpp"
#include "leap/outcome.hpp"
#include "leap/step_metrics.hpp"
#include "leap/trajectory.hpp"
#include "leap/turn_credit.hpp"
#include "leap/verdict.hpp"

namespace leap {

// Which evaluation a policy or environment call belongs to.
struct SampleKey {
  std::size_t task_index = 0;  // position of the task in this step's batch
  std::uint64_t task_id = 0;   // Task::id when the task has one, else task_index
  int sample = 0;              // 0..G-1 within the task's group
  int turn = 1;                // 1-based
  std::uint64_t step = 0;      // RolloutOptions::step
  std::uint64_t seed = 0;      // a function of (options.seed, step, task_id, sample, turn) only
  int attempt = 0;             // environment calls only: 0, then k on the k-th retry after an environment failure
};

// What the policy wrote for one turn.
template <class Payload = NoPayload>
struct Completion {
  Payload payload{};
  std::uint32_t tokens = 0;  // completion tokens of this turn
};

// What the environment said of one completion: a verdict, or (environment_failure) that it could not
// judge it.
struct Evaluation {
  Verdict verdict = Verdict::compile_error;
  double speedup = std::numeric_limits<double>::quiet_NaN();
  std::string feedback;               // shown to the policy on the next turn
  std::uint32_t feedback_tokens = 0;  // size of that feedback in tokens, when the environment knows it
  // The environment could not judge the completion (its transport or infrastructure failed); verdict,
  // speedup and feedback_tokens are ignored and feedback says why. run_step retries, then masks the
  // trajectory (see the top of this file). Never for what the candidate's text determines.
  bool environment_failure = false;

  static Evaluation environment_failed(std::string why) {
    Evaluation evaluation;
    evaluation.feedback = std::move(why);
    evaluation.environment_failure = true;
    return evaluation;
  }
};

namespace detail {
template <class Policy>
struct policy_payload {
  using type = NoPayload;
};
template <class Policy>
requires requires { typename Policy::payload_type; }
struct policy_payload<Policy> {
  using type = typename Policy::payload_type;
};
}  // namespace detail

template <class Policy>
using policy_payload_t = typename detail::policy_payload<std::remove_cvref_t<Policy>>::type;

template <class Policy, class Task>
concept rollout_policy = requires(Policy& policy, const Task& task, const Trajectory<policy_payload_t<Policy>>& so_far,
                                  const SampleKey& key) {
  { policy.complete(task, so_far, key) } -> std::convertible_to<Completion<policy_payload_t<Policy>>>;
};

template <class Environment, class Task, class Payload>
concept rollout_environment = requires(Environment& environment, const Task& task,
                                       const Completion<Payload>& completion, const SampleKey& key) {
  { environment.evaluate(task, completion, key) } -> std::convertible_to<Evaluation>;
};

struct RolloutOptions {
  int group_size = 8;      // G, samples per task
  int max_turns = 3;       // turns of an expanded trajectory, the first included
  double gamma = 1.0;      // turn credit discount, in [0, 1] (see turn_advantages)
  std::uint64_t seed = 0;  // mixed into every SampleKey::seed
  std::uint64_t step = 0;  // the step's index: SampleKey::step and StepMetrics::step
  // Evaluations of the same completion again after an environment failure, before the trajectory is
  // masked; in [0, max_environment_retries].
  int environment_retries = 1;

  static constexpr int max_environment_retries = 16;

  void validate() const {
    if (group_size < 1)
      detail::throw_invalid_argument("leap::RolloutOptions: group_size (", group_size, ") must be >= 1");
    if (max_turns < 1) detail::throw_invalid_argument("leap::RolloutOptions: max_turns (", max_turns, ") must be >= 1");
    if (!(gamma >= 0.0 && gamma <= 1.0)) {
      detail::throw_invalid_argument("leap::RolloutOptions: gamma (", gamma, ") is outside [0, 1]");
    }
    if (environment_retries < 0 || environment_retries > max_environment_retries) {
      detail::throw_invalid_argument("leap::RolloutOptions: environment_retries (", environment_retries,
                                     ") is outside [0, ", max_environment_retries, "]");
    }
  }
};

// One turn to train on. Its payload and feedback are in the step's trajectories: see StepResult.
struct TrainingSample {
  std::size_t task_index = 0;
  std::uint64_t task_id = 0;
  int sample = 0;
  std::size_t trajectory = 0;  // index into StepResult::trajectories
  int turn = 1;                // 1-based
  double advantage = 0.0;
  std::uint32_t tokens = 0;  // completion tokens of this turn
  // The trajectory was masked (an environment failure): advantage 0, and the trainer leaves this sample
  // out of the loss. Never train it as a failure.
  bool masked = false;
  friend bool operator==(const TrainingSample&, const TrainingSample&) = default;
};

template <class Payload = NoPayload>
struct StepResult {
  // Task-major flat views, one entry per trajectory: trajectory = task_index * G + sample. group_ids and
  // outcomes feed rank_advantages or the baselines as they are.
  std::vector<Trajectory<Payload>> trajectories;
  std::vector<Outcome> outcomes;
  std::vector<std::uint32_t> group_ids;  // the task index of each trajectory
  std::vector<double> advantages;        // per trajectory, before turn credit
  // One entry per task.
  std::vector<GroupStats> turn1_stats;
  std::vector<GateDecision> decisions;
  // One per turn, in trajectory order then turn order.
  std::vector<TrainingSample> samples;
  StepMetrics metrics;

  const Turn<Payload>& turn_of(const TrainingSample& sample) const {
    return trajectories.at(sample.trajectory).turns.at(static_cast<std::size_t>(sample.turn - 1));
  }
  const Payload& payload_of(const TrainingSample& sample) const { return turn_of(sample).payload; }
};

namespace detail {

constexpr std::uint64_t sample_seed(std::uint64_t seed, std::uint64_t step, std::uint64_t task_id, int sample,
                                    int turn) noexcept {
  std::uint64_t h = mix64(seed);
  h = mix64(h ^ step);
  h = mix64(h ^ task_id);
  h = mix64(h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(sample)));
  return mix64(h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(turn)));
}

template <class Task>
std::uint64_t task_id_of(const Task& task, std::size_t index) {
  if constexpr (requires {
                  { task.id } -> std::convertible_to<std::uint64_t>;
                }) {
    return static_cast<std::uint64_t>(task.id);
  } else {
    return static_cast<std::uint64_t>(index);
  }
}

inline std::string current_exception_message() {
  try {
    throw;
  } catch (const std::exception& error) {
    return error.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

struct TrajectoryCounters {  // written only by the evaluations of one trajectory, which never overlap
  std::int64_t policy_errors = 0;
  std::int64_t environment_errors = 0;
  std::int64_t environment_retries = 0;
  std::uint64_t feedback_tokens = 0;
};

}  // namespace detail

// Runs one step over `tasks` (any contiguous range). Returns the trajectories, advantages, training
// samples and metrics. Throws std::invalid_argument for bad options or a gate whose validate() throws.
template <std::ranges::contiguous_range Tasks, class Policy, class Environment, class Gate,
          class Advantage = RankAdvantage<>, class Executor = InlineExecutor>
StepResult<policy_payload_t<Policy>> run_step(const Tasks& tasks, Policy&& policy, Environment&& environment,
                                              Gate&& gate, const Advantage& advantage = {}, Executor&& executor = {},
                                              const RolloutOptions& options = {}) {
  using Task = std::ranges::range_value_t<Tasks>;
  using Payload = policy_payload_t<Policy>;
  static_assert(rollout_policy<std::remove_reference_t<Policy>, Task>,
                "leap::run_step: the policy must provide `leap::Completion<P> complete(const Task&, const "
                "leap::Trajectory<P>& so_far, const leap::SampleKey&)`, where P is Policy::payload_type (declare it, "
                "or use leap::NoPayload)");
  static_assert(rollout_environment<std::remove_reference_t<Environment>, Task, Payload>,
                "leap::run_step: the environment must provide `leap::Evaluation evaluate(const Task&, const "
                "leap::Completion<P>&, const leap::SampleKey&)` for the policy's payload type P");
  static_assert(gate_policy<std::remove_reference_t<Gate>>,
                "leap::run_step: the gate must provide `leap::GateDecision assess(const leap::GroupStats&) const` or "
                "`void assess_step(std::span<const leap::GroupCandidate>, std::span<leap::GateDecision>)`");
  static_assert(advantage_estimator<Advantage>,
                "leap::run_step: the advantage must provide `void compute(std::span<const leap::Outcome>, "
                "std::span<const std::uint32_t>, std::span<double>) const`, e.g. leap::RankAdvantage<>");
  static_assert(index_executor<std::remove_cvref_t<Executor>>,
                "leap::run_step: the executor must provide `void for_each_index(std::size_t n, Fn fn)`, e.g. "
                "leap::InlineExecutor or leap::ThreadPool");

  const auto started = std::chrono::steady_clock::now();
  options.validate();
  detail::validate_if_able(gate);
  const std::span<const Task> batch(std::ranges::data(tasks), std::ranges::size(tasks));
  if (batch.size() > std::numeric_limits<std::uint32_t>::max()) {
    detail::throw_invalid_argument("leap::run_step: ", batch.size(), " tasks exceed 2^32 - 1");
  }
  const auto group_size = static_cast<std::size_t>(options.group_size);
  const std::size_t count = batch.size() * group_size;

  StepResult<Payload> result;
  result.trajectories.resize(count);
  std::vector<detail::TrajectoryCounters> counters(count);
  std::vector<std::uint64_t> task_ids(batch.size());
  for (std::size_t t = 0; t < batch.size(); ++t) task_ids[t] = detail::task_id_of(batch[t], t);

  StepMetrics& metrics = result.metrics;
  metrics.step = options.step;
  metrics.tasks = static_cast<int>(batch.size());
  metrics.group_size = options.group_size;
  metrics.max_turns = options.max_turns;
  metrics.trajectories = static_cast<int>(count);
  metrics.evaluations_per_turn.assign(static_cast<std::size_t>(options.max_turns), 0);

  // One turn of one trajectory. Touches only that trajectory's slot, so any executor may run these.
  const auto evaluate = [&](std::size_t trajectory, int turn) {
    const std::size_t task_index = trajectory / group_size;
    const int sample = static_cast<int>(trajectory % group_size);
    const Task& task = batch[task_index];
    const std::uint64_t task_id = task_ids[task_index];
    const SampleKey key{task_index,   task_id,
                        sample,       turn,
                        options.step, detail::sample_seed(options.seed, options.step, task_id, sample, turn)};
    Trajectory<Payload>& so_far = result.trajectories[trajectory];
    detail::TrajectoryCounters& counter = counters[trajectory];
    const auto where = [&] {
      return detail::concat(" on task ", task_index, " (id ", task_id, "), sample ", sample, ", turn ", turn, ": ");
    };
    Turn<Payload> record;
    Completion<Payload> completion;
    try {
      completion = policy.complete(task, std::as_const(so_far), key);
    } catch (...) {
      record.verdict = Verdict::runtime_error;
      record.feedback = "leap::run_step: the policy threw" + where() + detail::current_exception_message();
      ++counter.policy_errors;
      so_far.turns.push_back(std::move(record));
      return;
    }
    record.tokens = completion.tokens;
    // The environment's attempts at this completion: a verdict ends them; an environment failure (a
    // throw, or environment_failure) is retried, and the last one masks the trajectory.
    for (SampleKey attempt_key = key;; ++attempt_key.attempt) {
      std::string failure;
      try {
        Evaluation evaluation = environment.evaluate(task, std::as_const(completion), std::as_const(attempt_key));
        if (!evaluation.environment_failure) {
          record.verdict = evaluation.verdict;
          record.speedup = evaluation.speedup;
          record.feedback = std::move(evaluation.feedback);
          counter.feedback_tokens += evaluation.feedback_tokens;
          break;
        }
        failure = detail::concat("the environment could not judge it", where(), evaluation.feedback);
      } catch (...) {
        failure = detail::concat("the environment threw", where(), detail::current_exception_message());
      }
      ++counter.environment_errors;
      if (attempt_key.attempt >= options.environment_retries) {
        record.verdict = Verdict::runtime_error;  // a placeholder: environment_failure says there is no verdict
        record.environment_failure = true;
        record.feedback = detail::concat("leap::run_step: ", failure, " (attempt ", attempt_key.attempt + 1, " of ",
                                         options.environment_retries + 1, "; the trajectory is masked)");
        break;
      }
      ++counter.environment_retries;
    }
    record.payload = std::move(completion.payload);
    so_far.turns.push_back(std::move(record));
  };
  const auto run_turn = [&](std::span<const std::size_t> active, int turn) {
    executor.for_each_index(active.size(), [&](std::size_t i) { evaluate(active[i], turn); });
    metrics.evaluations_per_turn[static_cast<std::size_t>(turn - 1)] = static_cast<std::int64_t>(active.size());
  };

  // 1. Turn 1 for every sample.
  std::vector<std::size_t> active(count);
  for (std::size_t i = 0; i < count; ++i) active[i] = i;
  run_turn(active, 1);

  // 2. The gate, on each group's turn-1 verdicts (an environment failure is no verdict: left out).
  std::vector<GroupCandidate> candidates(batch.size());
  std::vector<Verdict> turn1;
  turn1.reserve(group_size);
  result.turn1_stats.resize(batch.size());
  for (std::size_t t = 0; t < batch.size(); ++t) {
    turn1.clear();
    for (std::size_t s = 0; s < group_size; ++s) {
      const Turn<Payload>& first = result.trajectories[t * group_size + s].turns.front();
      if (!first.environment_failure) turn1.push_back(first.verdict);
    }
    result.turn1_stats[t] = group_stats(turn1);
    candidates[t] = GroupCandidate{t, task_ids[t], result.turn1_stats[t],
                                   static_cast<std::int64_t>(result.turn1_stats[t].n_fail()) * (options.max_turns - 1)};
  }
  result.decisions.resize(batch.size());
  assess_groups(gate, std::span<const GroupCandidate>(candidates), std::span<GateDecision>(result.decisions));
  for (const GateDecision& decision : result.decisions) metrics.count(decision);

  // 3. Debugging turns for the unsolved trajectories of expanded groups (a masked one has ended).
  for (int turn = 2; turn <= options.max_turns; ++turn) {
    active.clear();
    for (std::size_t i = 0; i < count; ++i) {
      const auto& turns = result.trajectories[i].turns;
      if (result.decisions[i / group_size].expands() && static_cast<int>(turns.size()) == turn - 1 &&
          turns.back().verdict != Verdict::correct && !turns.back().environment_failure) {
        active.push_back(i);
      }
    }
    if (active.empty()) break;
    run_turn(active, turn);
  }

  // 4. Outcomes, advantages per group over the judged trajectories (the masked ones keep 0), credit per turn.
  result.outcomes.resize(count);
  result.group_ids.resize(count);
  result.advantages.assign(count, 0.0);
  std::vector<std::size_t> judged;
  judged.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    result.outcomes[i] = summarize(result.trajectories[i]);
    result.group_ids[i] = static_cast<std::uint32_t>(i / group_size);
    if (!result.trajectories[i].environment_failed()) judged.push_back(i);
  }
  if (judged.size() == count) {
    advantage.compute(std::span<const Outcome>(result.outcomes), std::span<const std::uint32_t>(result.group_ids),
                      std::span<double>(result.advantages));
  } else if (!judged.empty()) {
    std::vector<Outcome> judged_outcomes(judged.size());
    std::vector<std::uint32_t> judged_groups(judged.size());
    std::vector<double> judged_advantages(judged.size(), 0.0);
    for (std::size_t k = 0; k < judged.size(); ++k) {
      judged_outcomes[k] = result.outcomes[judged[k]];
      judged_groups[k] = result.group_ids[judged[k]];
    }
    advantage.compute(std::span<const Outcome>(judged_outcomes), std::span<const std::uint32_t>(judged_groups),
                      std::span<double>(judged_advantages));
    for (std::size_t k = 0; k < judged.size(); ++k) result.advantages[judged[k]] = judged_advantages[k];
  }

  // 5. Samples and metrics, in index order.
  std::vector<std::int64_t> solved_at(static_cast<std::size_t>(options.max_turns) + 1, 0);
  double squared_advantages = 0.0;
  std::size_t trained_samples = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const Trajectory<Payload>& trajectory = result.trajectories[i];
    const Outcome& outcome = result.outcomes[i];
    const bool masked = trajectory.environment_failed();
    const std::vector<double> per_turn = turn_advantages(masked ? 0.0 : result.advantages[i], trajectory.num_turns(),
                                                         outcome.solved_turn, options.gamma);
    for (int turn = 1; turn <= trajectory.num_turns(); ++turn) {
      const Turn<Payload>& record = trajectory.turns[static_cast<std::size_t>(turn - 1)];
      const double turn_advantage = per_turn[static_cast<std::size_t>(turn - 1)];
      result.samples.push_back(TrainingSample{i / group_size, task_ids[i / group_size],
                                              static_cast<int>(i % group_size), i, turn, turn_advantage, record.tokens,
                                              masked});
      metrics.completion_tokens += record.tokens;
      if (!masked) {
        squared_advantages += turn_advantage * turn_advantage;
        ++trained_samples;
      }
    }
    metrics.masked_trajectories += masked;
    if (outcome.solved_turn > 0) ++solved_at[static_cast<std::size_t>(outcome.solved_turn)];
    if (outcome.solved_turn > 1) {
      ++metrics.solved_later;
      metrics.solved_later_negative += result.advantages[i] < 0.0;
    }
    metrics.policy_errors += counters[i].policy_errors;
    metrics.environment_errors += counters[i].environment_errors;
    metrics.environment_retries += counters[i].environment_retries;
    metrics.feedback_tokens += counters[i].feedback_tokens;
  }
  for (std::int64_t evaluations : metrics.evaluations_per_turn) metrics.evaluations += evaluations;
  if (trained_samples > 0) metrics.advantage_rms = std::sqrt(squared_advantages / static_cast<double>(trained_samples));
  metrics.accuracy_at_turn.assign(static_cast<std::size_t>(options.max_turns), 0.0);
  std::int64_t solved = 0;
  for (int turn = 1; turn <= options.max_turns; ++turn) {
    solved += solved_at[static_cast<std::size_t>(turn)];
    metrics.accuracy_at_turn[static_cast<std::size_t>(turn - 1)] =
        judged.empty() ? 0.0 : static_cast<double>(solved) / static_cast<double>(judged.size());
  }
  metrics.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace leap

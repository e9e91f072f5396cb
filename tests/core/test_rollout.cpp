// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "leap/difficulty_tracker.hpp"
#include "leap/gate.hpp"
#include "leap/gate_policies.hpp"
#include "leap/metrics_json.hpp"
#include "leap/rollout.hpp"

using Catch::Matchers::Contains;
using leap::Expansion;
using leap::GateReason;
using leap::Verdict;

namespace {

// A scripted task: sample s becomes correct at turn solve_at[s] (0: never) and fails with `failure` before.
struct ScriptTask {
  std::uint64_t id = 0;
  std::vector<int> solve_at;
  Verdict failure = Verdict::wrong_answer;
  int throw_policy_sample = -1;  // the policy throws for this sample at throw_turn
  int throw_env_sample = -1;     // the environment throws for this sample at throw_turn
  int throw_turn = 1;
  std::vector<int> unjudged;        // the environment cannot judge these samples at unjudged_turn (dead-lettered)
  int unjudged_turn = 1;            // ...
  int unjudged_attempts = 1 << 20;  // ... on their first unjudged_attempts attempts; later attempts judge them
};

// Writes "task/sample/turn" and checks it was shown the previous turn's feedback; thread-safe.
struct ScriptPolicy {
  using payload_type = std::string;
  mutable std::atomic<int> calls{0};

  leap::Completion<std::string> complete(const ScriptTask& task, const leap::Trajectory<std::string>& so_far,
                                         const leap::SampleKey& key) const {
    ++calls;
    if (so_far.num_turns() != key.turn - 1) throw std::logic_error("trajectory length does not match the turn");
    if (key.turn > 1 && so_far.turns.back().feedback != "fix turn " + std::to_string(key.turn - 1) &&
        so_far.turns.back().verdict != Verdict::runtime_error) {
      throw std::logic_error("the policy was not shown the last feedback");
    }
    if (key.sample == task.throw_policy_sample && key.turn == task.throw_turn)
      throw std::runtime_error("sampler crashed");
    return {std::to_string(task.id) + "/" + std::to_string(key.sample) + "/" + std::to_string(key.turn),
            static_cast<std::uint32_t>(10 * key.turn + key.sample)};
  }
};

struct ScriptEnvironment {
  leap::Evaluation evaluate(const ScriptTask& task, const leap::Completion<std::string>&,
                            const leap::SampleKey& key) const {
    if (key.sample == task.throw_env_sample && key.turn == task.throw_turn) throw std::runtime_error("sandbox lost");
    if (std::find(task.unjudged.begin(), task.unjudged.end(), key.sample) != task.unjudged.end() &&
        key.turn == task.unjudged_turn && key.attempt < task.unjudged_attempts) {
      return leap::Evaluation::environment_failed("dead-lettered: delivered 3 times without an answer (attempt " +
                                                  std::to_string(key.attempt) + ")");
    }
    const int solve = task.solve_at[static_cast<std::size_t>(key.sample)];
    const bool correct = solve > 0 && key.turn >= solve;
    return {correct ? Verdict::correct : task.failure, correct ? 1.0 + key.sample : 0.0,
            "fix turn " + std::to_string(key.turn), 3};
  }
};

// The standard script, G = 4, band {2, 3}:
//   task 10: solved by all at turn 1        N_fail 0  prune_easy
//   task 11: solved at turns 1, 2, 3, never N_fail 3  expand
//   task 12: never solved                   N_fail 4  prune_catastrophic
//   task 13: solved at turns 1, 1, 2, never N_fail 2  expand
std::vector<ScriptTask> script() {
  return {{10, {1, 1, 1, 1}}, {11, {1, 2, 3, 0}}, {12, {0, 0, 0, 0}, Verdict::compile_error}, {13, {1, 1, 2, 0}}};
}

leap::RolloutOptions options(int group_size = 4, int max_turns = 3) {
  leap::RolloutOptions result;
  result.group_size = group_size;
  result.max_turns = max_turns;
  result.gamma = 0.5;
  result.seed = 42;
  return result;
}

std::vector<int> turns_per_trajectory(const leap::StepResult<std::string>& result) {
  std::vector<int> turns;
  for (const auto& trajectory : result.trajectories) turns.push_back(trajectory.num_turns());
  return turns;
}

}  // namespace

TEST_CASE("pruned groups get one turn, expanded ones debug until solved or out of turns", "[rollout]") {
  const auto tasks = script();
  ScriptPolicy policy;
  const auto result =
      leap::run_step(tasks, policy, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                     leap::RankAdvantage<>{leap::KernelOrder::turns_only()}, leap::InlineExecutor{}, options());
  CHECK(turns_per_trajectory(result) == std::vector<int>{1, 1, 1, 1, 1, 2, 3, 3, 1, 1, 1, 1, 1, 1, 2, 3});
  CHECK(result.decisions ==
        std::vector<leap::GateDecision>{{Expansion::prune_easy, GateReason::too_few_failures},
                                        {Expansion::expand, GateReason::in_band},
                                        {Expansion::prune_catastrophic, GateReason::too_many_failures},
                                        {Expansion::expand, GateReason::in_band}});
  CHECK(result.turn1_stats[2] == leap::GroupStats{4, 0, 0, 0, 0, 4});
  CHECK(result.trajectories[6].turns[2].payload == "11/2/3");
  CHECK(result.trajectories[6].turns[2].verdict == Verdict::correct);

  const leap::StepMetrics& m = result.metrics;
  CHECK(m.evaluations_per_turn == std::vector<std::int64_t>{16, 5, 3});
  CHECK(m.evaluations == 24);
  CHECK(policy.calls.load() == 24);
  CHECK(m.accuracy_at_turn == std::vector<double>{7.0 / 16, 9.0 / 16, 10.0 / 16});
  CHECK(m.accuracy_at(2) == 9.0 / 16);
  CHECK(m.groups(Expansion::expand) == 2);
  CHECK(m.groups(Expansion::prune_easy) == 1);
  CHECK(m.groups(Expansion::prune_catastrophic) == 1);
  CHECK(m.groups(Expansion::prune_budget) == 0);
  CHECK(m.groups(GateReason::in_band) == 2);
  CHECK(m.groups(GateReason::too_few_failures) == 1);
  CHECK(m.groups(GateReason::too_many_failures) == 1);
  CHECK(m.policy_errors == 0);
  CHECK(m.environment_errors == 0);
  CHECK(m.feedback_tokens == 24 * 3);
  std::uint64_t tokens = 0;
  for (const auto& sample : result.samples) tokens += sample.tokens;
  CHECK(m.completion_tokens == tokens);
  CHECK(m.tasks == 4);
  CHECK(m.trajectories == 16);
  CHECK(m.wall_seconds >= 0.0);
}

TEST_CASE("advantages are ranked per group and credited per turn", "[rollout]") {
  const auto tasks = script();
  const auto result =
      leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                     leap::RankAdvantage<>{leap::KernelOrder::turns_only()}, leap::InlineExecutor{}, options());
  // Task 11: solved at 1, 2, 3, never.
  CHECK(result.advantages[4] == Approx(1.0));
  CHECK(result.advantages[5] == Approx(1.0 / 3));
  CHECK(result.advantages[6] == Approx(-1.0 / 3));
  CHECK(result.advantages[7] == Approx(-1.0));
  // Tasks 10 and 12 are all-tied.
  for (std::size_t i : std::vector<std::size_t>{0, 1, 2, 3, 8, 9, 10, 11}) CHECK(result.advantages[i] == 0.0);
  CHECK(result.group_ids[5] == 1);
  CHECK(result.outcomes[6].solved_turn == 3);

  REQUIRE(result.samples.size() == 24);  // one per evaluation
  std::vector<double> trajectory5;
  for (const auto& sample : result.samples) {
    CHECK(result.payload_of(sample) == std::to_string(tasks[sample.task_index].id) + "/" +
                                           std::to_string(sample.sample) + "/" + std::to_string(sample.turn));
    CHECK(sample.tokens == static_cast<std::uint32_t>(10 * sample.turn + sample.sample));
    CHECK(sample.task_id == tasks[sample.task_index].id);
    if (sample.trajectory == 5) trajectory5.push_back(sample.advantage);
  }
  CHECK(trajectory5.size() == 2);
  CHECK(trajectory5[0] == Approx(1.0 / 6));  // gamma 0.5 back from the solving turn
  CHECK(trajectory5[1] == Approx(1.0 / 3));
  CHECK(result.turn_of(result.samples.back()).feedback == "fix turn 3");
}

TEST_CASE("max_turns = 1 evaluates turn 1 only, whatever the gate says", "[rollout]") {
  const auto tasks = script();
  const auto result = leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::AlwaysExpand{},
                                     leap::RankAdvantage<>{}, leap::InlineExecutor{}, options(4, 1));
  CHECK(result.metrics.evaluations == 16);
  CHECK(result.metrics.groups(GateReason::always_expand) == 4);
  CHECK(result.metrics.accuracy_at_turn == std::vector<double>{7.0 / 16});
}

TEST_CASE("the baselines run through the same loop", "[rollout][baselines]") {
  const auto tasks = script();
  SECTION("single-turn GRPO: NeverExpand and a binary reward") {
    const auto result = leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::NeverExpand{},
                                       leap::GrpoAdvantage<>{}, leap::InlineExecutor{}, options());
    CHECK(result.metrics.evaluations == 16);
    CHECK(result.metrics.groups(GateReason::never_expand) == 4);
    std::vector<double> rewards;
    for (const auto& outcome : result.outcomes) rewards.push_back(outcome.solved() ? 1.0 : 0.0);
    std::vector<double> expected(rewards.size());
    leap::grpo_advantages(rewards, result.group_ids, std::span<double>(expected));
    CHECK(result.advantages == expected);
  }
  SECTION("unpruned multi-turn GRPO: AlwaysExpand") {
    const auto result = leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::AlwaysExpand{},
                                       leap::GrpoAdvantage<>{}, leap::InlineExecutor{}, options());
    // Every unsolved trajectory continues: task 12 now takes 3 turns per sample.
    CHECK(result.metrics.evaluations_per_turn == std::vector<std::int64_t>{16, 9, 7});
    CHECK(result.trajectories[8].num_turns() == 3);
  }
  SECTION("RLOO") {
    const auto result = leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                       leap::RlooAdvantage<>{}, leap::InlineExecutor{}, options());
    CHECK(result.advantages[7] == Approx(0.0 - 3.0 / 3));  // task 11: three others solved
  }
}

TEST_CASE("step gates run through the loop: budget and tracker", "[rollout][gates]") {
  const auto tasks = script();
  leap::BudgetedGate<> budget{leap::FailBandGate{2, 3}, 1};
  const auto result = leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, budget, leap::RankAdvantage<>{},
                                     leap::InlineExecutor{}, options());
  // Task 11 (3 wrong answers) is worth more than task 13 (2), so 13 is pruned for budget.
  CHECK(result.decisions[1].expansion == Expansion::expand);
  CHECK(result.decisions[3] == leap::GateDecision{Expansion::prune_budget, GateReason::over_budget});
  CHECK(result.metrics.groups(GateReason::over_budget) == 1);
  CHECK(result.metrics.evaluations_per_turn == std::vector<std::int64_t>{16, 3, 2});

  leap::DifficultyTracker tracker;
  leap::RolloutOptions step = options();
  for (std::uint64_t s = 0; s < 3; ++s) {
    step.step = s;
    const auto tracked = leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, tracker, leap::RankAdvantage<>{},
                                        leap::InlineExecutor{}, step);
    CHECK(tracked.metrics.step == s);
    if (s > 0) CHECK(tracked.decisions[2].reason == GateReason::tracked_hopeless);
  }
  CHECK(tracker.difficulty(12)->observations == 3);  // keyed by ScriptTask::id
  CHECK(tracker.difficulty(11)->fail_rate == 0.75);
}

TEST_CASE("a throwing policy or environment costs one evaluation, not the step", "[rollout][errors]") {
  auto tasks = script();
  tasks[1].throw_policy_sample = 2;  // task 11, sample 2, turn 2
  tasks[1].throw_turn = 2;
  tasks[3].throw_env_sample = 1;  // task 13, sample 1, turn 1: a solved sample's environment throws
  tasks[3].throw_turn = 1;
  const auto result = leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                     leap::RankAdvantage<>{}, leap::InlineExecutor{}, options());
  CHECK(result.metrics.policy_errors == 1);
  CHECK(result.metrics.environment_errors == 2);  // the first attempt and its one retry
  CHECK(result.metrics.environment_retries == 1);
  CHECK(result.metrics.masked_trajectories == 1);
  const auto& crashed = result.trajectories[6].turns[1];
  CHECK(crashed.verdict == Verdict::runtime_error);
  CHECK_FALSE(crashed.environment_failure);
  CHECK_THAT(crashed.feedback, Contains("policy threw on task 1 (id 11), sample 2, turn 2: sampler crashed"));
  CHECK(crashed.tokens == 0);
  // A throwing environment has judged nothing: an environment failure, not the candidate's runtime_error.
  const auto& lost = result.trajectories[13].turns[0];
  CHECK(lost.environment_failure);
  CHECK_THAT(lost.feedback, Contains("environment threw on task 3 (id 13), sample 1, turn 1: sandbox lost"));
  CHECK_THAT(lost.feedback, Contains("attempt 2 of 2"));
  CHECK(lost.payload == "13/1/1");  // the completion is kept (its samples are masked)
  // The crashed trajectory retries at turn 3 and is solved there; the rest of the step is untouched.
  CHECK(result.trajectories[6].num_turns() == 3);
  CHECK(result.outcomes[6].solved_turn == 3);
  CHECK(result.trajectories[13].num_turns() == 1);  // masked: no feedback from an environment that failed
  CHECK(result.metrics.evaluations_per_turn == std::vector<std::int64_t>{16, 5, 3});
}

TEST_CASE("a dead-lettered evaluation is not ranked as the candidate's runtime_error: retried, then masked",
          "[rollout][environment_failure]") {
  // Task 11: solved at turns 1, 2, 3, never. The environment cannot judge sample 0 (solved at turn 1) on any
  // attempt. Ranked as a runtime_error it would lose to every solved member, and the group's four turn-1
  // failures would make it catastrophic (no debugging turns at all).
  auto tasks = script();
  tasks[1].unjudged = {0};
  const auto result =
      leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                     leap::RankAdvantage<>{leap::KernelOrder::turns_only()}, leap::InlineExecutor{}, options());
  const auto& lost = result.trajectories[4];
  REQUIRE(lost.num_turns() == 1);
  CHECK(lost.turns[0].environment_failure);
  CHECK(lost.environment_failed());
  CHECK_THAT(lost.turns[0].feedback, Contains("could not judge it on task 1 (id 11), sample 0, turn 1: dead-lettered"));
  CHECK_THAT(lost.turns[0].feedback, Contains("attempt 2 of 2; the trajectory is masked"));
  CHECK(lost.turns[0].payload == "11/0/1");
  // The gate counts the three judged members: three wrong answers, in the band.
  CHECK(result.turn1_stats[1] == leap::GroupStats{3, 0, 3, 0, 0, 0});
  CHECK(result.decisions[1] == leap::GateDecision{Expansion::expand, GateReason::in_band});
  // Not ranked: advantage 0. The others are ranked among themselves: (wins - losses) / (3 - 1).
  CHECK(result.advantages[4] == 0.0);
  std::vector<leap::Outcome> judged(result.outcomes.begin() + 5, result.outcomes.begin() + 8);
  CHECK(leap::rank_advantages(std::span<const leap::Outcome>(judged), leap::KernelOrder::turns_only()) ==
        std::vector<double>{result.advantages[5], result.advantages[6], result.advantages[7]});
  CHECK(result.advantages[5] == 1.0);
  CHECK(result.advantages[6] == 0.0);
  CHECK(result.advantages[7] == -1.0);
  // Its samples are masked with advantage 0; nobody else's are.
  for (const auto& sample : result.samples) {
    CHECK(sample.masked == (sample.trajectory == 4));
    if (sample.masked) CHECK(sample.advantage == 0.0);
  }
  const leap::StepMetrics& m = result.metrics;
  CHECK(m.environment_errors == 2);
  CHECK(m.environment_retries == 1);
  CHECK(m.masked_trajectories == 1);
  CHECK(m.evaluations_per_turn == std::vector<std::int64_t>{16, 3 + 2, 2 + 1});
  // Accuracy over the 15 judged trajectories: 6 at turn 1 (tasks 10 and 13), then 11's and 13's repairs.
  CHECK(m.accuracy_at_turn == std::vector<double>{6.0 / 15, 8.0 / 15, 9.0 / 15});
}

TEST_CASE("an environment failure that a retry judges is that retry's verdict", "[rollout][environment_failure]") {
  auto tasks = script();
  tasks[1].unjudged = {0};
  tasks[1].unjudged_attempts = 1;  // the first attempt is lost, the retry answers
  const auto clean = leap::run_step(script(), ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                    leap::RankAdvantage<>{}, leap::InlineExecutor{}, options());
  ScriptPolicy policy;
  const auto result = leap::run_step(tasks, policy, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                     leap::RankAdvantage<>{}, leap::InlineExecutor{}, options());
  CHECK(result.trajectories == clean.trajectories);
  CHECK(result.advantages == clean.advantages);
  CHECK(result.samples == clean.samples);
  CHECK(policy.calls.load() == 24);  // the policy is not asked again: the same completion is evaluated again
  CHECK(result.metrics.environment_errors == 1);
  CHECK(result.metrics.environment_retries == 1);
  CHECK(result.metrics.masked_trajectories == 0);
}

TEST_CASE("environment_retries bounds the attempts before masking", "[rollout][environment_failure]") {
  auto tasks = script();
  tasks[1].unjudged = {0};
  tasks[1].unjudged_attempts = 3;
  auto run = [&](int retries) {
    auto step = options();
    step.environment_retries = retries;
    return leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3}, leap::RankAdvantage<>{},
                          leap::InlineExecutor{}, step);
  };
  const auto none = run(0);
  CHECK(none.trajectories[4].environment_failed());
  CHECK_THAT(none.trajectories[4].turns[0].feedback, Contains("attempt 1 of 1"));
  CHECK(none.metrics.environment_errors == 1);
  CHECK(none.metrics.environment_retries == 0);
  CHECK(none.metrics.masked_trajectories == 1);
  const auto three = run(3);  // the fourth attempt answers
  CHECK_FALSE(three.trajectories[4].environment_failed());
  CHECK(three.outcomes[4].solved_turn == 1);
  CHECK(three.metrics.environment_errors == 3);
  CHECK(three.metrics.environment_retries == 3);
  CHECK(three.metrics.masked_trajectories == 0);
}

TEST_CASE("environment failures at turn 1 do not count in the gate's turn-1 statistics",
          "[rollout][environment_failure]") {
  // Task 10: all four solve at turn 1. Two unjudged members counted as failures would put the group in
  // the band {2, 3} and buy debugging turns for kernels that were correct.
  auto tasks = script();
  tasks[0].unjudged = {0, 1};
  const auto result = leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                     leap::RankAdvantage<>{}, leap::InlineExecutor{}, options());
  CHECK(result.turn1_stats[0] == leap::GroupStats{2, 2, 0, 0, 0, 0});
  CHECK(result.decisions[0] == leap::GateDecision{Expansion::prune_easy, GateReason::too_few_failures});
  CHECK(result.metrics.masked_trajectories == 2);
  CHECK(result.metrics.evaluations_per_turn == std::vector<std::int64_t>{16, 5, 3});
}

TEST_CASE("a masked feedback turn ends the trajectory and masks every turn of it", "[rollout][environment_failure]") {
  auto tasks = script();
  tasks[1].unjudged = {1};  // task 11, sample 1: wrong at turn 1, unjudged at turn 2 (where it would be solved)
  tasks[1].unjudged_turn = 2;
  const auto result =
      leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                     leap::RankAdvantage<>{leap::KernelOrder::turns_only()}, leap::InlineExecutor{}, options());
  const auto& masked = result.trajectories[5];
  REQUIRE(masked.num_turns() == 2);
  CHECK_FALSE(masked.turns[0].environment_failure);
  CHECK(masked.turns[1].environment_failure);
  CHECK(result.outcomes[5].solved_turn == 0);
  CHECK(result.outcomes[5].best_verdict == Verdict::wrong_answer);     // the placeholder is no verdict
  CHECK(result.turn1_stats[1] == leap::GroupStats{4, 1, 3, 0, 0, 0});  // turn 1 was judged
  CHECK(result.advantages[5] == 0.0);
  CHECK(result.advantages[4] == 1.0);  // solved at 1, 3 and never, ranked among themselves
  CHECK(result.advantages[6] == 0.0);
  CHECK(result.advantages[7] == -1.0);
  int masked_samples = 0;
  for (const auto& sample : result.samples) {
    if (sample.trajectory != 5) continue;
    CHECK(sample.masked);
    CHECK(sample.advantage == 0.0);
    ++masked_samples;
  }
  CHECK(masked_samples == 2);
}

TEST_CASE("a group with fewer than two judged members gets advantage 0, and with none it is an empty group",
          "[rollout][environment_failure]") {
  auto tasks = script();
  tasks[1].unjudged = {0, 1, 2};     // task 11: only sample 3 (never solved) is judged
  tasks[3].unjudged = {0, 1, 2, 3};  // task 13: nobody is judged
  for (const bool grpo : {false, true}) {
    const auto result = grpo ? leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                              leap::GrpoAdvantage<>{}, leap::InlineExecutor{}, options())
                             : leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                              leap::RankAdvantage<>{}, leap::InlineExecutor{}, options());
    CHECK(result.turn1_stats[1] == leap::GroupStats{1, 0, 1, 0, 0, 0});
    CHECK(result.decisions[1] == leap::GateDecision{Expansion::prune_easy, GateReason::too_few_failures});
    CHECK(result.turn1_stats[3] == leap::GroupStats{});
    CHECK(result.decisions[3] == leap::GateDecision{Expansion::prune_easy, GateReason::empty_group});
    for (std::size_t i = 4; i < 8; ++i) CHECK(result.advantages[i] == 0.0);
    for (std::size_t i = 12; i < 16; ++i) CHECK(result.advantages[i] == 0.0);
    CHECK(result.metrics.masked_trajectories == 7);
  }
  // Everything masked: nothing is ranked, and the metrics say so.
  for (auto& task : tasks) task.unjudged = {0, 1, 2, 3};
  const auto none = leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                   leap::RankAdvantage<>{}, leap::InlineExecutor{}, options());
  CHECK(none.metrics.masked_trajectories == 16);
  CHECK(none.metrics.accuracy_at_turn == std::vector<double>{0.0, 0.0, 0.0});
  CHECK(none.metrics.advantage_rms == 0.0);
  for (double a : none.advantages) CHECK(a == 0.0);
}

TEST_CASE("bad options and bad gates are refused before anything runs", "[rollout][errors]") {
  const auto tasks = script();
  ScriptPolicy policy;
  auto run = [&](leap::RolloutOptions bad, leap::FailBandGate gate = {2, 3}) {
    return leap::run_step(tasks, policy, ScriptEnvironment{}, gate, leap::RankAdvantage<>{}, leap::InlineExecutor{},
                          bad);
  };
  CHECK_THROWS_WITH(run(options(0, 3)), Contains("group_size (0) must be >= 1"));
  CHECK_THROWS_WITH(run(options(4, 0)), Contains("max_turns (0) must be >= 1"));
  auto bad_gamma = options();
  bad_gamma.gamma = 1.5;
  CHECK_THROWS_WITH(run(bad_gamma), Contains("gamma (1.5) is outside [0, 1]"));
  auto bad_retries = options();
  bad_retries.environment_retries = -1;
  CHECK_THROWS_WITH(run(bad_retries), Contains("environment_retries (-1) is outside [0, 16]"));
  bad_retries.environment_retries = 17;
  CHECK_THROWS_WITH(run(bad_retries), Contains("environment_retries (17) is outside [0, 16]"));
  CHECK_THROWS_WITH(run(options(), leap::FailBandGate{4, 1}), Contains("t_min (4) > t_max (1) + 1"));
  const leap::BudgetedGate<> bad_budget{leap::FailBandGate{2, 3}, 1, -1, leap::RepairOdds{2.0}};
  CHECK_THROWS_WITH(leap::run_step(tasks, policy, ScriptEnvironment{}, bad_budget, leap::RankAdvantage<>{},
                                   leap::InlineExecutor{}, options()),
                    Contains("wrong_answer (2) is outside [0, 1]"));
  const auto bad_composite = leap::all_gates(leap::AlwaysExpand{}, leap::FailBandGate{3, 0});
  CHECK_THROWS_WITH(leap::run_step(tasks, policy, ScriptEnvironment{}, bad_composite, leap::RankAdvantage<>{},
                                   leap::InlineExecutor{}, options()),
                    Contains("t_min (3) > t_max (0) + 1"));
  CHECK(policy.calls.load() == 0);
}

TEST_CASE("an empty batch is an empty step", "[rollout]") {
  const std::vector<ScriptTask> none;
  const auto result = leap::run_step(none, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                     leap::RankAdvantage<>{}, leap::InlineExecutor{}, options());
  CHECK(result.samples.empty());
  CHECK(result.metrics.evaluations == 0);
  CHECK(result.metrics.accuracy_at_turn == std::vector<double>{0.0, 0.0, 0.0});
}

namespace {

struct RandomTask {
  std::uint64_t id;
};

// Verdicts and tokens drawn from the key's seed alone, like a sampling policy with a per-call seed.
struct SeededPolicy {
  using payload_type = std::uint64_t;
  leap::Completion<std::uint64_t> complete(const RandomTask&, const leap::Trajectory<std::uint64_t>&,
                                           const leap::SampleKey& key) const {
    return {key.seed, static_cast<std::uint32_t>(key.seed % 1000)};
  }
};
struct SeededEnvironment {
  leap::Evaluation evaluate(const RandomTask& task, const leap::Completion<std::uint64_t>& completion,
                            const leap::SampleKey& key) const {
    const std::uint64_t draw = leap::detail::mix64(completion.payload);
    // Now and then the environment cannot judge: once (the retry answers), or on every attempt (masked).
    if ((draw >> 20) % 11 == 0 && key.attempt < static_cast<int>((draw >> 24) % 3)) {
      return leap::Evaluation::environment_failed("lost in transit");
    }
    const auto difficulty = static_cast<double>(task.id % 10) / 10.0;
    const bool correct = static_cast<double>(draw % 1000) / 1000.0 > difficulty + 0.2 / key.turn;
    const auto verdict = correct ? Verdict::correct : leap::all_verdicts[draw % 4];
    return {verdict, static_cast<double>(draw % 7) + 0.5, "feedback " + std::to_string(draw % 97),
            static_cast<std::uint32_t>(draw % 50)};
  }
};

template <class Executor>
leap::StepResult<std::uint64_t> seeded_step(Executor&& executor) {
  std::vector<RandomTask> tasks;
  for (std::uint64_t t = 0; t < 40; ++t) tasks.push_back({1000 + t});
  leap::RolloutOptions step = options(8, 3);
  step.step = 5;
  auto result = leap::run_step(tasks, SeededPolicy{}, SeededEnvironment{}, leap::FailBandGate::leap_default(8),
                               leap::RankAdvantage<>{}, std::forward<Executor>(executor), step);
  result.metrics.wall_seconds = 0.0;
  return result;
}

}  // namespace

TEST_CASE("results do not depend on the executor or the thread count", "[rollout][threads]") {
  const auto inline_result = seeded_step(leap::InlineExecutor{});
  leap::ThreadPool one(1);
  leap::ThreadPool four(4);
  const auto one_result = seeded_step(one);
  const auto four_result = seeded_step(four);
  for (const auto* other : {&one_result, &four_result}) {
    CHECK(other->trajectories == inline_result.trajectories);
    CHECK(other->samples == inline_result.samples);
    CHECK(other->advantages == inline_result.advantages);
    CHECK(other->decisions == inline_result.decisions);
    CHECK(other->metrics == inline_result.metrics);
  }
  // The script is rich enough to exercise every path.
  CHECK(inline_result.metrics.groups(Expansion::expand) > 0);
  CHECK(inline_result.metrics.groups(Expansion::prune_easy) > 0);
  CHECK(inline_result.metrics.evaluations_per_turn[2] > 0);
  CHECK(inline_result.metrics.masked_trajectories > 0);
  CHECK(inline_result.metrics.environment_retries > inline_result.metrics.masked_trajectories);
}

TEST_CASE("run_step defaults: rank advantage, inline executor, LEAP's G and turns", "[rollout]") {
  const std::vector<RandomTask> tasks = {{3}, {4}};
  const auto result = leap::run_step(tasks, SeededPolicy{}, SeededEnvironment{}, leap::FailBandGate::leap_default(8));
  CHECK(result.metrics.group_size == 8);
  CHECK(result.metrics.max_turns == 3);
  CHECK(result.trajectories.size() == 16);
  // The rank over the judged trajectories (the environment fails now and then); the masked ones get 0.
  std::vector<leap::Outcome> judged;
  std::vector<std::uint32_t> judged_groups;
  for (std::size_t i = 0; i < 16; ++i) {
    if (result.trajectories[i].environment_failed()) continue;
    judged.push_back(result.outcomes[i]);
    judged_groups.push_back(result.group_ids[i]);
  }
  std::vector<double> ranked(judged.size());
  leap::rank_advantages(std::span<const leap::Outcome>(judged), std::span<const std::uint32_t>(judged_groups),
                        std::span<double>(ranked));
  std::vector<double> expected(16, 0.0);
  for (std::size_t i = 0, k = 0; i < 16; ++i) {
    if (!result.trajectories[i].environment_failed()) expected[i] = ranked[k++];
  }
  CHECK(result.advantages == expected);
}

TEST_CASE("sample seeds depend on seed, step, task, sample and turn", "[rollout]") {
  using leap::detail::sample_seed;
  const std::uint64_t base = sample_seed(1, 2, 3, 4, 5);
  CHECK(base == sample_seed(1, 2, 3, 4, 5));
  CHECK(base != sample_seed(0, 2, 3, 4, 5));
  CHECK(base != sample_seed(1, 0, 3, 4, 5));
  CHECK(base != sample_seed(1, 2, 0, 4, 5));
  CHECK(base != sample_seed(1, 2, 3, 0, 5));
  CHECK(base != sample_seed(1, 2, 3, 4, 0));
}

TEST_CASE("step metrics serialise to JSON lines and read back", "[rollout][json]") {
  const auto tasks = script();
  const auto result = leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                     leap::RankAdvantage<>{}, leap::InlineExecutor{}, options());
  const std::string line = leap::to_json_line(result.metrics);
  CHECK(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);
  const auto document = nlohmann::json::parse(line);
  CHECK(document["groups_by_expansion"]["expand"] == 2);
  CHECK(document["groups_by_reason"]["too_many_failures"] == 1);
  CHECK(document["evaluations_per_turn"] == nlohmann::json::array({16, 5, 3}));
  CHECK(document.get<leap::StepMetrics>() == result.metrics);

  // The environment's failures, retries and masked trajectories are in the line; older lines read as 0.
  auto lossy = script();
  lossy[1].unjudged = {0};
  const auto lost = leap::run_step(lossy, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                   leap::RankAdvantage<>{}, leap::InlineExecutor{}, options());
  auto counted = nlohmann::json::parse(leap::to_json_line(lost.metrics));
  CHECK(counted["environment_errors"] == 2);
  CHECK(counted["environment_retries"] == 1);
  CHECK(counted["masked_trajectories"] == 1);
  CHECK(counted.get<leap::StepMetrics>() == lost.metrics);
  counted.erase("environment_retries");
  counted.erase("masked_trajectories");
  CHECK(counted.get<leap::StepMetrics>().masked_trajectories == 0);

  CHECK(nlohmann::json(leap::GateDecision{Expansion::prune_budget, GateReason::over_budget}).dump() ==
        R"({"expansion":"prune_budget","reason":"over_budget"})");
  CHECK(nlohmann::json::parse(R"({"expansion":"expand","reason":"in_band"})").get<leap::GateDecision>() ==
        leap::GateDecision{});
  const leap::GroupStats stats{8, 1, 2, 3, 1, 1};
  CHECK(nlohmann::json(stats).get<leap::GroupStats>() == stats);
  auto broken = document;
  broken["groups_by_reason"]["in_band"] = "two";
  CHECK_THROWS_WITH(broken.get<leap::StepMetrics>(), Contains("StepMetrics.groups_by_reason.in_band"));
  CHECK_THROWS_AS(nlohmann::json("expnd").get<leap::Expansion>(), leap::json_error);
}

TEST_CASE("step metrics: advantage RMS and successful repairs with a negative advantage", "[rollout][metrics]") {
  const auto tasks = script();
  // LEAP as published. Task 11 (solved at 1, 2, 3, never): the turn-2 repair beats the failure and
  // the turn-3 one, loses to turn 1: +1/3; the turn-3 repair: -1/3. Task 13 (1, 1, 2, never): the
  // turn-2 repair loses to two turn-1 successes and beats one failure: -1/3.
  const auto published = leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                        leap::RankAdvantage<>{}, leap::InlineExecutor{}, options());
  CHECK(published.metrics.solved_later == 3);
  CHECK(published.metrics.solved_later_negative == 2);
  CHECK(published.metrics.solved_later_negative_share() == Approx(2.0 / 3));
  double squares = 0.0;
  for (const auto& sample : published.samples) squares += sample.advantage * sample.advantage;
  CHECK(published.metrics.advantage_rms == Approx(std::sqrt(squares / static_cast<double>(published.samples.size()))));
  CHECK(published.metrics.advantage_rms > 0.0);

  // turn_weight = 0: successes tie, so no repair is pushed down.
  leap::KernelOrder binary;
  binary.turn_weight = 0.0;
  const auto tied = leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                   leap::RankAdvantage<>{binary}, leap::InlineExecutor{}, options());
  CHECK(tied.metrics.solved_later == 3);
  CHECK(tied.metrics.solved_later_negative == 0);
  CHECK(tied.metrics.solved_later_negative_share() == 0.0);

  // batch_rms normalisation puts the trajectories' advantages at RMS 1 (before turn credit).
  const auto scaled = leap::run_step(tasks, ScriptPolicy{}, ScriptEnvironment{}, leap::FailBandGate{2, 3},
                                     leap::RankAdvantage<>{{}, leap::AdvantageNormalization::batch_rms, 0.0},
                                     leap::InlineExecutor{}, options());
  double trajectory_squares = 0.0;
  for (double a : scaled.advantages) trajectory_squares += a * a;
  CHECK(std::sqrt(trajectory_squares / static_cast<double>(scaled.advantages.size())) == Approx(1.0));
  CHECK(scaled.metrics.solved_later_negative == 2);  // scaling keeps signs

  // The JSON line carries the fields; the share is derived.
  const auto document = nlohmann::json::parse(leap::to_json_line(published.metrics));
  CHECK(document["advantage_rms"].get<double>() == published.metrics.advantage_rms);
  CHECK(document["solved_later"] == 3);
  CHECK(document["solved_later_negative"] == 2);
  CHECK(document["solved_later_negative_share"].get<double>() == Approx(2.0 / 3));
  CHECK(document.get<leap::StepMetrics>() == published.metrics);
  auto older = document;  // a line written before the fields existed
  older.erase("advantage_rms");
  older.erase("solved_later");
  older.erase("solved_later_negative");
  older.erase("solved_later_negative_share");
  const auto read = older.get<leap::StepMetrics>();
  CHECK(read.advantage_rms == 0.0);
  CHECK(read.solved_later == 0);
  auto inconsistent = document;
  inconsistent["solved_later_negative"] = 4;
  CHECK_THROWS_WITH(inconsistent.get<leap::StepMetrics>(), Contains("StepMetrics.solved_later_negative"));
}

// SPDX-License-Identifier: Apache-2.0
#include "runner.hpp"

#include <cmath>

#include <leap/rollout.hpp>

#include "softmax_policy.hpp"

namespace toy {

namespace {

// The multi-turn baselines' reward: γ^(k-1) for a success at turn k, 0 unsolved.
struct DiscountedSolvedReward {
  double gamma = 0.9;
  double operator()(const leap::Outcome& outcome) const noexcept {
    return outcome.solved() ? std::pow(gamma, outcome.solved_turn - 1) : 0.0;
  }
};

class Runner {
 public:
  Runner(const Options& options, const std::vector<Task>& tasks, std::uint64_t seed)
      : options_(options), tasks_(tasks), seed_(seed) {}

  RunResult run(const Variant& variant, double learning_rate) const {
    const int turns = variant.gate == GateKind::single_turn ? 1 : options_.max_turns;
    const auto with_gate = [&](const auto& advantage) {
      switch (variant.gate) {
        case GateKind::single_turn: return train(leap::NeverExpand{}, advantage, turns, learning_rate);
        case GateKind::all: return train(leap::AlwaysExpand{}, advantage, turns, learning_rate);
        case GateKind::dcp:
          return train(leap::FailBandGate::leap_default(options_.group_size), advantage, turns, learning_rate);
      }
      return RunResult{};
    };
    if (variant.estimator == Estimator::rank) return with_gate(leap::RankAdvantage<>{variant.order});
    return with_gate(leap::GrpoAdvantage<DiscountedSolvedReward>{{variant.reward_gamma}, {}});
  }

 private:
  // Held-out accuracy of the policy on every task: the same random draws at every call.
  Point evaluate(const SoftmaxPolicy& policy) const {
    leap::RolloutOptions eval;
    eval.group_size = options_.eval_samples;
    eval.max_turns = options_.max_turns;
    eval.seed = seed_ ^ 0xe7a1ull;
    const auto result = leap::run_step(tasks_, policy, environment_, leap::AlwaysExpand{}, leap::RankAdvantage<>{},
                                       leap::InlineExecutor{}, eval);
    double log_sum = 0.0;
    int solved = 0;
    for (const leap::Outcome& outcome : result.outcomes) {
      if (outcome.solved() && outcome.speedup > 0.0) {
        log_sum += std::log(outcome.speedup);
        ++solved;
      }
    }
    Point point;
    point.acc_turn1 = result.metrics.accuracy_at(1);
    point.acc_final = result.metrics.accuracy_at(options_.max_turns);
    point.speedup = solved > 0 ? std::exp(log_sum / solved) : 0.0;
    return point;
  }

  template <class Gate, class Advantage>
  RunResult train(Gate gate, const Advantage& advantage, int max_turns, double learning_rate) const {
    RunResult run;
    SoftmaxPolicy policy(static_cast<int>(tasks_.size()));
    run.curve.push_back(evaluate(policy));
    double modelled_seconds = 0.0;
    std::int64_t next_eval = options_.eval_interval;
    for (int step = 1; run.evaluations < options_.budget; ++step) {
      leap::RolloutOptions rollout;
      rollout.group_size = options_.group_size;
      rollout.max_turns = max_turns;
      rollout.gamma = options_.credit_gamma;
      rollout.seed = seed_;
      rollout.step = static_cast<std::uint64_t>(step);
      const auto result =
          leap::run_step(tasks_, policy, environment_, gate, advantage, leap::InlineExecutor{}, rollout);
      policy.update(result, learning_rate, options_.group_size);
      const leap::StepMetrics& m = result.metrics;
      run.steps = step;
      run.evaluations += m.evaluations;
      run.solved_later += m.solved_later;
      run.solved_later_negative += m.solved_later_negative;
      run.advantage_rms_sum += m.advantage_rms;
      run.groups += m.tasks;
      for (std::size_t r = 0; r < leap::gate_reason_count; ++r) run.groups_by_reason[r] += m.groups_by_reason[r];
      for (const auto& trajectory : result.trajectories) {
        for (const auto& turn : trajectory.turns) {
          modelled_seconds +=
              (options_.compile_ms + (turn.verdict != leap::Verdict::compile_error ? options_.gpu_ms : 0.0)) / 1000.0;
        }
      }
      if (run.evaluations >= next_eval || run.evaluations >= options_.budget) {
        while (next_eval <= run.evaluations) next_eval += options_.eval_interval;
        Point point = evaluate(policy);
        point.step = step;
        point.evaluations = run.evaluations;
        point.modelled_seconds = modelled_seconds;
        run.curve.push_back(point);
      }
    }
    return run;
  }

  const Options& options_;
  const std::vector<Task>& tasks_;
  std::uint64_t seed_;
  toy::SimulatedKernelEnvironment environment_;
};

}  // namespace

RunResult run_one(const Options& options, const std::vector<Task>& tasks, std::uint64_t seed, const Variant& variant,
                  double learning_rate) {
  return Runner(options, tasks, seed).run(variant, learning_rate);
}

}  // namespace toy

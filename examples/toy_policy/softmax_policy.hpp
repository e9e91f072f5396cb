// SPDX-License-Identifier: Apache-2.0
// The toy policy: softmax preferences, trained by policy gradient on leap's advantages.
//   first turn   per-task logits over the strategies (what to try first on this task)
//   repair turn  per-task logits over repair moves, conditioned on the failure kind the feedback
//                names (each task's failures need their own fixes)
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <random>

#include <leap/rollout.hpp>

#include "../common/softmax_choice.hpp"
#include "simulated_kernel_env.hpp"

namespace toy {

class SoftmaxPolicy {
 public:
  using payload_type = Choice;

  explicit SoftmaxPolicy(int task_count)
      : first_(Eigen::MatrixXd::Zero(task_count, strategies)),
        repair_(Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(task_count) * failure_kinds, repair_moves)) {}

  // Called concurrently during a step; reads the parameters only.
  leap::Completion<Choice> complete(const Task& task, const leap::Trajectory<Choice>& so_far,
                                    const leap::SampleKey& key) const {
    std::mt19937_64 rng(key.seed ^ 0x706f6cull);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    leap::Completion<Choice> completion;
    if (so_far.turns.empty()) {
      completion.payload.strategy = examples::sample(first_.row(task.index), unit(rng));
      completion.tokens = task.tokens[static_cast<std::size_t>(completion.payload.strategy)];
      return completion;
    }
    const leap::Turn<Choice>& last = so_far.turns.back();
    const int kind = failure_kind_of(last.feedback);
    completion.payload.strategy = last.payload.strategy;
    completion.payload.repairing_kind = kind;
    completion.payload.repair = kind < 0 ? static_cast<int>(rng() % repair_moves)
                                         : examples::sample(repair_.row(repair_row(task.index, kind)), unit(rng));
    completion.tokens = 150 + static_cast<std::uint32_t>(rng() % 100);
    return completion;
  }

  // One policy-gradient step: each turn's log-probability pushed by its advantage, averaged over
  // the group size so that the learning rate does not depend on G.
  template <class StepResult>
  void update(const StepResult& result, double learning_rate, int group_size) {
    Eigen::MatrixXd grad_first = Eigen::MatrixXd::Zero(first_.rows(), first_.cols());
    Eigen::MatrixXd grad_repair = Eigen::MatrixXd::Zero(repair_.rows(), repair_.cols());
    for (const auto& sample : result.samples) {
      if (sample.advantage == 0.0) continue;
      const Choice& choice = result.turn_of(sample).payload;
      const auto task_row = static_cast<Eigen::Index>(sample.task_index);  // every step runs all tasks, in order
      if (choice.repair < 0) {
        examples::add_log_prob_gradient(first_.row(task_row), choice.strategy, sample.advantage,
                                        grad_first.row(task_row));
      } else if (choice.repairing_kind >= 0) {
        const Eigen::Index row = repair_row(static_cast<int>(task_row), choice.repairing_kind);
        examples::add_log_prob_gradient(repair_.row(row), choice.repair, sample.advantage, grad_repair.row(row));
      }
    }
    first_ += (learning_rate / group_size) * grad_first;
    repair_ += (learning_rate / group_size) * grad_repair;
  }

  double first_choice_probability(int task_index, int strategy) const {
    return examples::softmax(first_.row(task_index))[strategy];
  }

 private:
  static Eigen::Index repair_row(int task_index, int kind) {
    return static_cast<Eigen::Index>(task_index) * failure_kinds + kind;
  }

  Eigen::MatrixXd first_;   // tasks x strategies
  Eigen::MatrixXd repair_;  // (task, failure kind) x repair moves
};

}  // namespace toy

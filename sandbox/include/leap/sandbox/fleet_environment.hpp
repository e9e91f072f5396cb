// SPDX-License-Identifier: Apache-2.0
// A sandbox fleet as the rollout loop's environment: leap::run_step(tasks, policy, FleetEnvironment{...},
// gate, estimator, pool, options) evaluates every turn on the fleet, unchanged. Two small functions
// say what the trainer's types mean to the sandbox: which task a Task is, and which CUDA source a
// Completion holds.
//
//   auto environment = leap::sandbox::FleetEnvironment(fleet,
//       [](const MyTask& t) { return leap::sandbox::FleetTask::builtin(t.name); },
//       [](const leap::Completion<std::string>& c) { return c.payload; });
//   auto step = leap::run_step(tasks, policy, environment, gate, leap::RankAdvantage<>{}, pool, options);
//
// Each evaluate() submits one eval and waits for its answer, so run the step on a ThreadPool as wide
// as the fleet to keep every member busy. An answer without a verdict (no GPU on the member, a harness
// error, an error response, a timeout) throws, and run_step records that evaluation as a
// runtime_error turn carrying the message (metrics.environment_errors counts them): never a made-up
// verdict.
#pragma once

#include <chrono>
#include <concepts>
#include <optional>
#include <string>
#include <utility>

#include <leap/rollout.hpp>

#include "leap/sandbox/fleet_client.hpp"

namespace leap::sandbox {

// The rollout loop's view of one eval answer: verdict, speedup, feedback. Throws std::runtime_error
// naming the request, the member and what went wrong when the answer carries no verdict.
leap::Evaluation to_evaluation(const FleetReply& reply);

template <class TaskOf, class SourceOf>
class FleetEnvironment {
 public:
  FleetEnvironment(FleetClient& client, TaskOf task_of, SourceOf source_of,
                   std::optional<std::chrono::milliseconds> timeout = std::nullopt)
      : client_(&client), task_of_(std::move(task_of)), source_of_(std::move(source_of)), timeout_(timeout) {}

  template <class Task, class Payload>
  requires std::convertible_to<std::invoke_result_t<const TaskOf&, const Task&>, FleetTask> &&
      std::convertible_to < std::invoke_result_t < const SourceOf&,
      const leap::Completion<Payload>
  & >, std::string > leap::Evaluation evaluate(const Task& task, const leap::Completion<Payload>& completion,
                                               const leap::SampleKey&) const {
    const FleetTask fleet_task = task_of_(task);
    const std::string source = source_of_(completion);
    return to_evaluation(client_->eval(fleet_task, source, timeout_).get());
  }

 private:
  FleetClient* client_;
  TaskOf task_of_;
  SourceOf source_of_;
  std::optional<std::chrono::milliseconds> timeout_;
};

}  // namespace leap::sandbox

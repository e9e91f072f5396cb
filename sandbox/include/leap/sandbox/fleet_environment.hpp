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
// as the fleet to keep every member busy.
//
// What an answer means to the rollout loop (to_evaluation):
//   a verdict                      that verdict, its speedup and feedback
//   request_too_large              compile_error: the candidate's source made the request too long
//                                  (its own text decides this, so it stays the candidate's failure)
//   a source the client refuses    compile_error, decided here without sending it: the source is not
//   to send (RequestEncodingError  valid UTF-8, or makes the line longer than the members take. Its
//   of field "source")             text decided it, so it is never an environment failure
//   any other refused request      thrown on (a task the sandbox cannot read is the trainer's): run_step
//                                  takes it as an environment failure, retries, then masks
//   no verdict: dead_lettered, internal_error and every other error response, a result without a
//   verdict (no_gpu, a harness error), a timeout, a future that holds any other failure, a result
//   that is not an object, an unknown verdict
//                                  an environment failure (leap::Evaluation::environment_failed): the
//                                  fleet could not judge it. run_step retries it, then masks the
//                                  trajectory: never a made-up verdict, never the candidate's failure.
// Everything the candidate's text determines (no kernel, host code, a compile error, a kernel that
// crashes or hangs the GPU runner) arrives as a verdict from the member's evaluator. A forged answer
// never reaches a future (the client drops it); if no genuine one follows, the request times out.
#pragma once

#include <chrono>
#include <concepts>
#include <future>
#include <optional>
#include <string>
#include <utility>

#include <leap/rollout.hpp>

#include "leap/sandbox/fleet_client.hpp"
#include "leap/sandbox/request_encoding_error.hpp"

namespace leap::sandbox {

// The rollout loop's view of one eval answer, as tabled above. Never throws for what the answer holds.
leap::Evaluation to_evaluation(const FleetReply& reply);
// A request the client refused to send: the candidate's compile_error when the source was refused
// (feedback says why); any other field's refusal is thrown on, as an environment failure.
leap::Evaluation to_evaluation(const RequestEncodingError& refused);
// Waits for the answer and maps it; a FleetTimeout or any other failure to get one is an environment failure.
leap::Evaluation to_evaluation(std::future<FleetReply> answer);

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
    std::future<FleetReply> answer;
    try {
      answer = client_->eval(fleet_task, source, timeout_);
    } catch (const RequestEncodingError& refused) {  // nothing was sent
      return to_evaluation(refused);
    }
    return to_evaluation(std::move(answer));
  }

 private:
  FleetClient* client_;
  TaskOf task_of_;
  SourceOf source_of_;
  std::optional<std::chrono::milliseconds> timeout_;
};

}  // namespace leap::sandbox

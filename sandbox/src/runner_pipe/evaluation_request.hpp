// SPDX-License-Identifier: Apache-2.0
// The evaluation request the evaluator sends to the GPU runner, and its JSON form (sent as CBOR in a
// request frame, frames.hpp). The one place its keys are spelled. Internal.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace leap::sandbox::detail {

struct EvaluationRequest {
  std::string task;        // the task spec as JSON text (task_to_json)
  std::string candidate;   // the candidate's module image (CUBIN bytes)
  std::string reference;   // the reference's module image
  std::uint64_t seed = 1;  // the correctness trials' inputs derive from it alone (reproducible)
  bool time = true;        // false: verdict only, no timing
  // The candidate's launch-plan directives (launch_plan.hpp); absent: the task's own launch.
  std::optional<std::string> plan;
};

// runner_request(RunnerOp::eval) (runner_control.hpp) with "task": text, "candidate": bytes, "reference": bytes,
// "seed": u64, "time": bool,
//  "plan": text (only when declared)}
nlohmann::json to_json(const EvaluationRequest& request);

// The request back; a missing task or module throws nlohmann's exception (the runner answers it as
// a failure). A missing seed or time takes the default above; a plan that is not text is ignored.
EvaluationRequest evaluation_request_from_json(const nlohmann::json& request);

}  // namespace leap::sandbox::detail

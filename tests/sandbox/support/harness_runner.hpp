// SPDX-License-Identifier: Apache-2.0
// Runs the evaluation protocol against the CPU fake of the driver, as a runner would: the request,
// the harness's reply, and the EvalResult the evaluator reads from it. The caller adds the modules
// "fake:candidate" and "fake:reference" to the fake first; a module's kernel named as the task's
// entry, registered without parameters, is taken to have the task's signature.
#pragma once

#include <cstdint>
#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/task.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fake_gpu_driver.hpp"
#include "evaluation/gpu_harness.hpp"
#include "evaluation/runner_reply.hpp"

namespace leap::sandbox::test {

struct HarnessOutcome {
  nlohmann::json reply;
  EvalResult result;
};

inline HarnessOutcome run_harness(FakeGpu& gpu, const TaskSpec& task, std::uint64_t seed, bool time,
                                  const std::string& plan = {}) {
  detail::EvaluationRequest request;
  request.task = task_to_json(task);
  request.candidate = "fake:candidate";
  request.reference = "fake:reference";
  request.seed = seed;
  request.time = time;
  if (!plan.empty()) request.plan = plan;
  for (const char* module : {"fake:candidate", "fake:reference"}) {
    if (!gpu.has_params(module, task.entry)) gpu.set_params(module, task.entry, FakeGpu::signature_params(task));
  }
  HarnessOutcome o;
  // Through the wire format both ways, as the evaluator and the runner see it.
  const detail::EvaluationRequest sent = detail::evaluation_request_from_json(detail::to_json(request));
  o.reply = detail::to_json(detail::run_evaluation(sent, gpu, [&](std::string_view s) {
    gpu.log.push_back({"stage", std::string(s)});
  }));
  detail::read_runner_reply(detail::evaluation_reply_from_json(o.reply), o.result);
  return o;
}

// The verdict's name, or the status and error when there is none.
inline std::string verdict_of(const EvalResult& r) {
  return r.verdict ? std::string(leap::to_string(*r.verdict))
                   : "status " + std::string(to_string(r.status)) + ": " + r.error;
}

}  // namespace leap::sandbox::test

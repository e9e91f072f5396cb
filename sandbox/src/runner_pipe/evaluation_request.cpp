// SPDX-License-Identifier: Apache-2.0
#include "runner_pipe/evaluation_request.hpp"

#include <vector>

#include "runner_pipe/runner_control.hpp"

namespace leap::sandbox::detail {
namespace {

using nlohmann::json;

constexpr const char* k_task = "task";
constexpr const char* k_candidate = "candidate";
constexpr const char* k_reference = "reference";
constexpr const char* k_seed = "seed";
constexpr const char* k_time = "time";
constexpr const char* k_plan = "plan";

json bytes(const std::string& image) { return json::binary(std::vector<std::uint8_t>(image.begin(), image.end())); }

std::string image(const json& request, const char* key) {
  const auto& b = request.at(key).get_binary();
  return std::string(b.begin(), b.end());
}

}  // namespace

json to_json(const EvaluationRequest& request) {
  json j = runner_request(RunnerOp::eval);
  j[k_task] = request.task;
  j[k_candidate] = bytes(request.candidate);
  j[k_reference] = bytes(request.reference);
  j[k_seed] = request.seed;
  j[k_time] = request.time;
  if (request.plan) j[k_plan] = *request.plan;
  return j;
}

EvaluationRequest evaluation_request_from_json(const json& request) {
  EvaluationRequest r;
  r.task = request.at(k_task).get<std::string>();
  r.candidate = image(request, k_candidate);
  r.reference = image(request, k_reference);
  r.seed = request.value(k_seed, std::uint64_t{1});
  r.time = request.value(k_time, true);
  if (const auto it = request.find(k_plan); it != request.end() && it->is_string()) r.plan = it->get<std::string>();
  return r;
}

}  // namespace leap::sandbox::detail

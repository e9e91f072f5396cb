// SPDX-License-Identifier: Apache-2.0
// The GPU runner's operations and the replies they share: which operation a request names
// (evaluating is one; its request and reply are evaluation_request.hpp's and evaluation_reply.hpp's),
// the liveness check and the GPU probe with their replies, and the plain success and failure every
// operation may answer. The one place these keys are spelled. Internal.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace leap::sandbox::detail {

enum class RunnerOp {
  ping,   // is it alive, which process, how it is configured and confined
  probe,  // the GPU as probe_gpu reports it (loads the driver in the runner, never in the parent)
  sleep,  // test operation: a runner that hangs
  crash,  // test operation: a runner that dies mid-request
  exit,   // end the runner after the reply
  eval,   // an evaluation (evaluation_request.hpp)
};
std::string_view to_string(RunnerOp op) noexcept;

// {"op": name}: the whole request for every operation but sleep's duration and an evaluation's fields.
nlohmann::json runner_request(RunnerOp op);
// The operation a request names; nullopt for any other, with `name` set to what it said.
std::optional<RunnerOp> runner_op_of(const nlohmann::json& request, std::string& name);
// How long a sleep request asks the runner to hang.
int sleep_ms_of(const nlohmann::json& request);

// The confinement layers in force in the runner (confinement.hpp's GpuRunnerConfinement, as reported).
struct ConfinementReport {
  int landlock_abi = 0;
  bool seccomp = false;
  std::string error;
};

struct PingReply {
  long pid = 0;
  bool fake = false;
  ConfinementReport confinement;
  bool allow_pageable_host_access = false;
  std::size_t local_memory_restart_bytes = 0;
};
nlohmann::json to_json(const PingReply& reply);

// The probe's answer: the driver probe's report text (driver_probe.hpp parses it).
nlohmann::json probe_reply(const std::string& report, const ConfinementReport& confinement);
std::string probe_report_of(const nlohmann::json& reply);

// The keys every runner reply carries: answered, or not and why.
namespace runner_keys {
inline constexpr const char* ok = "ok";
inline constexpr const char* error = "error";
}  // namespace runner_keys

nlohmann::json runner_success();                          // {"ok": true}
nlohmann::json runner_failure(const std::string& error);  // {"ok": false, "error": ...}

}  // namespace leap::sandbox::detail

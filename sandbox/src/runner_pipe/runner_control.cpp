// SPDX-License-Identifier: Apache-2.0
#include "runner_pipe/runner_control.hpp"

namespace leap::sandbox::detail {
namespace {

using nlohmann::json;

constexpr const char* k_op = "op";
constexpr const char* k_ms = "ms";
constexpr const char* k_ok = runner_keys::ok;
constexpr const char* k_error = runner_keys::error;
constexpr const char* k_pid = "pid";
constexpr const char* k_fake = "fake";
constexpr const char* k_confinement = "confinement";
constexpr const char* k_landlock_abi = "landlock_abi";
constexpr const char* k_seccomp = "seccomp";
constexpr const char* k_allow_pageable_host_access = "allow_pageable_host_access";
constexpr const char* k_local_memory_restart_bytes = "local_memory_restart_bytes";
constexpr const char* k_report = "report";

constexpr RunnerOp k_ops[] = {RunnerOp::ping,  RunnerOp::probe, RunnerOp::sleep,
                              RunnerOp::crash, RunnerOp::exit,  RunnerOp::eval};

json confinement_json(const ConfinementReport& c) {
  return {{k_landlock_abi, c.landlock_abi}, {k_seccomp, c.seccomp}, {k_error, c.error}};
}

}  // namespace

std::string_view to_string(RunnerOp op) noexcept {
  switch (op) {
    case RunnerOp::ping: return "ping";
    case RunnerOp::probe: return "probe";
    case RunnerOp::sleep: return "sleep";
    case RunnerOp::crash: return "crash";
    case RunnerOp::exit: return "exit";
    case RunnerOp::eval: return "eval";
  }
  return "unknown";
}

json runner_request(RunnerOp op) { return {{k_op, to_string(op)}}; }

std::optional<RunnerOp> runner_op_of(const json& request, std::string& name) {
  name = request.value(k_op, "");
  for (RunnerOp op : k_ops) {
    if (to_string(op) == name) return op;
  }
  return std::nullopt;
}

int sleep_ms_of(const json& request) { return request.value(k_ms, 0); }

json to_json(const PingReply& r) {
  return {{k_ok, true},
          {k_pid, r.pid},
          {k_fake, r.fake},
          {k_confinement, confinement_json(r.confinement)},
          {k_allow_pageable_host_access, r.allow_pageable_host_access},
          {k_local_memory_restart_bytes, r.local_memory_restart_bytes}};
}

json probe_reply(const std::string& report, const ConfinementReport& confinement) {
  return {{k_ok, true}, {k_report, report}, {k_confinement, confinement_json(confinement)}};
}

std::string probe_report_of(const json& reply) { return reply.value(k_report, ""); }

json runner_success() { return {{k_ok, true}}; }

json runner_failure(const std::string& error) { return {{k_ok, false}, {k_error, error}}; }

}  // namespace leap::sandbox::detail

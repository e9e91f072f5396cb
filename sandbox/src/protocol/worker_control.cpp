// SPDX-License-Identifier: Apache-2.0
#include "protocol/worker_control.hpp"

namespace leap::sandbox::detail {
namespace {

using nlohmann::json;

constexpr const char* k_op = "op";
constexpr const char* k_ms = "ms";
constexpr const char* k_ok = "ok";
constexpr const char* k_error = "error";
constexpr const char* k_pid = "pid";
constexpr const char* k_fake = "fake";
constexpr const char* k_confinement = "confinement";
constexpr const char* k_landlock_abi = "landlock_abi";
constexpr const char* k_seccomp = "seccomp";
constexpr const char* k_allow_pageable_host_access = "allow_pageable_host_access";
constexpr const char* k_local_memory_restart_bytes = "local_memory_restart_bytes";
constexpr const char* k_report = "report";

constexpr WorkerOp k_ops[] = {WorkerOp::ping,  WorkerOp::probe, WorkerOp::sleep,
                              WorkerOp::crash, WorkerOp::exit,  WorkerOp::eval};

json confinement_json(const ConfinementReport& c) {
  return {{k_landlock_abi, c.landlock_abi}, {k_seccomp, c.seccomp}, {k_error, c.error}};
}

}  // namespace

std::string_view to_string(WorkerOp op) noexcept {
  switch (op) {
    case WorkerOp::ping: return "ping";
    case WorkerOp::probe: return "probe";
    case WorkerOp::sleep: return "sleep";
    case WorkerOp::crash: return "crash";
    case WorkerOp::exit: return "exit";
    case WorkerOp::eval: return "eval";
  }
  return "unknown";
}

json worker_request(WorkerOp op) { return {{k_op, to_string(op)}}; }

std::optional<WorkerOp> worker_op_of(const json& request, std::string& name) {
  name = request.value(k_op, "");
  for (WorkerOp op : k_ops) {
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

json worker_success() { return {{k_ok, true}}; }

json worker_failure(const std::string& error) { return {{k_ok, false}, {k_error, error}}; }

}  // namespace leap::sandbox::detail

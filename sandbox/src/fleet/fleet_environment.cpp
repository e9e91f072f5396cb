// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/fleet_environment.hpp"

#include <exception>
#include <nlohmann/json.hpp>

#include "protocol/request_codec.hpp"

namespace leap::sandbox {

leap::Evaluation to_evaluation(const FleetReply& reply) {
  const std::string where = "fleet request " + std::to_string(reply.id) +
                            (reply.member.empty() ? std::string() : " (member " + reply.member + ")");
  if (!reply.ok) {
    if (reply.code == detail::to_string(detail::ErrorCode::request_too_large)) {
      // The task and the protocol's envelope are the trainer's and small; the source is the candidate's.
      leap::Evaluation evaluation;
      evaluation.verdict = leap::Verdict::compile_error;
      evaluation.feedback = "Compile error: the kernel's source is too long to be evaluated (" + reply.error + ")";
      return evaluation;
    }
    return leap::Evaluation::environment_failed(where + ": " + reply.error);
  }
  const nlohmann::json result = nlohmann::json::parse(reply.result, nullptr, false);
  if (!result.is_object()) return leap::Evaluation::environment_failed(where + ": the answer has no result object");
  const auto verdict = result.find("verdict");
  if (verdict == result.end() || !verdict->is_string()) {
    std::string why = result.value("status", std::string("no verdict"));
    for (const char* key : {"error", "detail"}) {
      if (const auto it = result.find(key); it != result.end() && it->is_string() && !it->get<std::string>().empty()) {
        why += ": " + it->get<std::string>();
        break;
      }
    }
    return leap::Evaluation::environment_failed(where + " reached no verdict (" + why + ")");
  }
  const auto v = leap::verdict_from_string(verdict->get<std::string>());
  if (!v)
    return leap::Evaluation::environment_failed(where + ": unknown verdict '" + verdict->get<std::string>() + "'");
  leap::Evaluation evaluation;
  evaluation.verdict = *v;
  if (const auto s = result.find("speedup"); s != result.end() && s->is_number()) evaluation.speedup = s->get<double>();
  if (const auto f = result.find("feedback"); f != result.end() && f->is_string())
    evaluation.feedback = f->get<std::string>();
  return evaluation;
}

leap::Evaluation to_evaluation(const RequestEncodingError& refused) {
  // The task and the envelope are the trainer's; the source is the candidate's own text.
  if (refused.field() != detail::request_keys::source) throw refused;
  leap::Evaluation evaluation;
  evaluation.verdict = leap::Verdict::compile_error;
  evaluation.feedback = "Compile error: the kernel's source was not compiled: it " + refused.problem();
  return evaluation;
}

leap::Evaluation to_evaluation(std::future<FleetReply> answer) {
  FleetReply reply;
  try {
    reply = answer.get();
  } catch (const FleetTimeout& timeout) {
    return leap::Evaluation::environment_failed(std::string("timed out: ") + timeout.what());
  } catch (const std::exception& error) {
    return leap::Evaluation::environment_failed(std::string("no answer: ") + error.what());
  }
  return to_evaluation(reply);
}

}  // namespace leap::sandbox

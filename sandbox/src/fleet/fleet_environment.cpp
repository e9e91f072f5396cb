// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/fleet_environment.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace leap::sandbox {
leap::Evaluation to_evaluation(const FleetReply& reply) {
  const std::string where = "fleet request " + std::to_string(reply.id) +
                            (reply.member.empty() ? std::string() : " (member " + reply.member + ")");
  if (!reply.ok) throw std::runtime_error(where + ": " + reply.error);
  const nlohmann::json result = nlohmann::json::parse(reply.result, nullptr, false);
  if (!result.is_object()) throw std::runtime_error(where + ": the answer has no result object");
  const auto verdict = result.find("verdict");
  if (verdict == result.end() || !verdict->is_string()) {
    std::string why = result.value("status", std::string("no verdict"));
    for (const char* key : {"error", "detail"}) {
      if (const auto it = result.find(key); it != result.end() && it->is_string() && !it->get<std::string>().empty()) {
        why += ": " + it->get<std::string>();
        break;
      }
    }
    throw std::runtime_error(where + " reached no verdict (" + why + ")");
  }
  const auto v = leap::verdict_from_string(verdict->get<std::string>());
  if (!v) throw std::runtime_error(where + ": unknown verdict '" + verdict->get<std::string>() + "'");
  leap::Evaluation evaluation;
  evaluation.verdict = *v;
  if (const auto s = result.find("speedup"); s != result.end() && s->is_number()) evaluation.speedup = s->get<double>();
  if (const auto f = result.find("feedback"); f != result.end() && f->is_string())
    evaluation.feedback = f->get<std::string>();
  return evaluation;
}

}  // namespace leap::sandbox

// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/request_handler.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include <leap/version.hpp>

#include "leap/sandbox/builtin_tasks.hpp"
#include "leap/sandbox/compiler.hpp"
#include "leap/sandbox/driver_probe.hpp"
#include "leap/sandbox/task.hpp"

namespace leap::sandbox {
namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

const std::string& required_source(const json& request, const char* op) {
  const auto it = request.find("source");
  if (it == request.end() || !it->is_string()) {
    throw std::invalid_argument(std::string(op) + " needs a string \"source\"");
  }
  return it->get_ref<const std::string&>();
}

TaskSpec requested_task(const json& request) {
  const auto it = request.find("task");
  if (it == request.end()) throw std::invalid_argument("eval needs a \"task\" (a built-in name or a spec object)");
  if (!it->is_string()) return parse_task(it->dump());
  const std::string& name = it->get_ref<const std::string&>();
  const BuiltinTask* builtin = find_builtin_task(name);
  if (builtin == nullptr) throw std::invalid_argument("unknown task '" + name + "'");
  return builtin->spec;
}

json info_result(Evaluator& evaluator) {
  const GpuStatus& g = evaluator.gpu();
  return {{"leap_version", leap::version_string},
          {"versions", toolchain_versions()},
          {"arch", evaluator.arch()},
          {"gpu", {{"status", std::string(to_string(g.state))}, {"available", g.ok()}, {"reason", g.reason}}}};
}

json compile_result(Evaluator& evaluator, const json& request) {
  CompileJob job;
  job.source = required_source(request, "compile");
  job.options.arch = request.value("arch", evaluator.arch());
  return json::parse(to_json(evaluator.compiler().compile(job)));
}

json eval_result(Evaluator& evaluator, const json& request) {
  const std::string& source = required_source(request, "eval");
  const TaskSpec task = requested_task(request);
  return json::parse(to_json(evaluator.evaluate(task, source)));
}

}  // namespace

std::string RequestHandler::handle(std::string_view request_line) const {
  json request;
  try {
    request = json::parse(request_line);
  } catch (const json::parse_error& e) {
    return dump({{"id", nullptr}, {"ok", false}, {"error", std::string("malformed request: ") + e.what()}});
  }
  if (!request.is_object() || !request.contains("id")) {
    return dump({{"id", nullptr}, {"ok", false}, {"error", "malformed request: expected a JSON object with an \"id\""}});
  }
  const json& id = request.at("id");
  try {
    const auto op_it = request.find("op");
    const std::string op = op_it != request.end() && op_it->is_string() ? op_it->get<std::string>() : "";
    json result;
    if (op == "info") result = info_result(*evaluator_);
    else if (op == "compile") result = compile_result(*evaluator_, request);
    else if (op == "eval") result = eval_result(*evaluator_, request);
    else throw std::invalid_argument("unknown op '" + op + "' (compile, eval or info)");
    return dump({{"id", id}, {"ok", true}, {"result", std::move(result)}});
  } catch (const std::exception& e) {
    return dump({{"id", id}, {"ok", false}, {"error", e.what()}});
  }
}

}  // namespace leap::sandbox

// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/request_handler.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include <leap/version.hpp>

#include "leap/sandbox/builtin_tasks.hpp"
#include "leap/sandbox/compiler.hpp"
#include "leap/sandbox/driver_probe.hpp"
#include "leap/sandbox/kernel_diagnostics.hpp"
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

// The compile options a request may set, each checked for its JSON type here and for its value by
// validate(CompileOptions) in the compiler: "arch", "std", "default_device", "defines" (an object
// {"NAME": "VALUE"} or an array of "NAME[=VALUE]"), and "headers" ({"name.cuh": "text"}, shipped
// under the same rules as a task's headers: the include jail reads them like the source).
CompileJob compile_job(const json& request, const std::string& default_arch) {
  CompileJob job;
  job.source = required_source(request, "compile");
  auto typed = [&](const char* key, bool ok, const char* expected) {
    if (!ok) throw std::invalid_argument(std::string("compile: \"") + key + "\" must be " + expected);
  };
  job.options.arch = default_arch;
  if (const auto it = request.find("arch"); it != request.end()) {
    typed("arch", it->is_string(), "a string such as \"sm_90\"");
    job.options.arch = it->get<std::string>();
  }
  if (const auto it = request.find("std"); it != request.end()) {
    typed("std", it->is_number_integer(), "11, 14, 17 or 20");
    job.options.cxx_standard = it->get<int>();
  }
  if (const auto it = request.find("default_device"); it != request.end()) {
    typed("default_device", it->is_boolean(), "true or false");
    job.options.default_device = it->get<bool>();
  }
  if (const auto it = request.find("defines"); it != request.end()) {
    typed("defines", it->is_object() || it->is_array(), "an object {\"NAME\": \"VALUE\"} or an array of \"NAME[=VALUE]\"");
    if (it->is_object()) {
      for (const auto& [name, value] : it->items()) {
        typed("defines", value.is_string(), "an object whose values are strings");
        job.options.defines.push_back({name, value.get<std::string>()});
      }
    } else {
      for (const json& d : *it) {
        typed("defines", d.is_string(), "an array of \"NAME[=VALUE]\" strings");
        const std::string text = d.get<std::string>();
        const std::size_t eq = text.find('=');
        job.options.defines.push_back({text.substr(0, eq), eq == std::string::npos ? "" : text.substr(eq + 1)});
      }
    }
  }
  if (const auto it = request.find("headers"); it != request.end()) {
    typed("headers", it->is_object(), "an object {\"name.cuh\": \"header text\"}");
    for (const auto& [name, text] : it->items()) {
      typed("headers", text.is_string(), "an object whose values are the headers' text");
      job.headers.push_back({name, text.get<std::string>()});
    }
  }
  return job;
}

json compile_result(Evaluator& evaluator, const json& request) {
  const CompileJob job = compile_job(request, evaluator.arch());
  const CompileResult r = evaluator.compiler().compile(job);
  json out = json::parse(to_json(r));
  if (r.ok() && !r.ptx.empty()) {
    const std::vector<std::string> kernels = ptx_kernel_names(r.ptx);
    out["kernels"] = kernels;
    if (std::string advice = missing_kernel_advice(job.source, job.file_name, kernels); !advice.empty()) out["advice"] = advice;
  }
  return out;
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

// SPDX-License-Identifier: Apache-2.0
// sandbox/src/protocol: what crosses a process boundary as text or frames. serve's request lines
// (request_line.hpp, answered here), JSON and CBOR read within bounds (bounded_json), the evaluation
// worker's frames and the evaluation request and reply they carry. Not here: what an op does
// (compile/, evaluation/), the transport (the CLI's stdin and stdout; Redis in fleet/), nor the
// compile processes' own frames (compile/compile_frames).
#include "leap/sandbox/request_handler.hpp"

#include <initializer_list>
#include <optional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include <leap/version.hpp>

#include "common/json_keys.hpp"
#include "protocol/bounded_json.hpp"
#include "protocol/request_line.hpp"
#include "leap/sandbox/builtin_tasks.hpp"
#include "leap/sandbox/compiler.hpp"
#include "leap/sandbox/driver_probe.hpp"
#include "compile/kernel_diagnostics.hpp"
#include "leap/sandbox/task.hpp"

namespace leap::sandbox {
namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The response with the request's id spliced in as written; `body` is an object without "id".
std::string with_id(std::string_view raw_id, const json& body) {
  const std::string rest = dump(body);  // "{...}"
  std::string out;
  out.reserve(raw_id.size() + rest.size() + 8);
  out += "{\"id\":";
  out += raw_id;
  if (rest.size() > 2) out += ',';
  out.append(rest, 1, std::string::npos);
  return out;
}

std::string failure(std::string_view raw_id, const char* code, const std::string& error) {
  return with_id(raw_id, {{"ok", false}, {"code", code}, {"error", error}});
}

json compile_pool_json(const Compiler& compiler) {
  const CompilerConfig& c = compiler.config();
  const CompilePoolStats s = compiler.pool_stats();
  const bool pooled = c.isolation == Isolation::worker_pool;
  return {{"isolation", pooled                              ? "worker_pool"
                        : c.isolation == Isolation::process ? "process"
                                                            : "trusted_in_process"},
          {"workers", pooled ? c.pool.size : 0u},
          {"max_compiles_per_worker", c.pool.max_compiles_per_worker},
          {"pch", pooled && c.pool.pch},
          {"pch_scratch_bytes", c.pool.pch_scratch_bytes},
          {"nvrtc_pch_heap_bytes", nvrtc_pch_heap_bytes()},
          {"workers_started", s.workers_started},
          {"workers_replaced", s.workers_replaced},
          {"compiles", s.compiles},
          {"pch_hits", s.pch_hits},
          {"pch_created", s.pch_created}};
}

json info_result(Evaluator& evaluator) {
  const GpuStatus& g = evaluator.gpu();
  return {{"leap_version", leap::version_string},
          {"versions", toolchain_versions()},
          {"arch", evaluator.arch()},
          {"compile_pool", compile_pool_json(evaluator.compiler())},
          {"gpu", {{"status", std::string(to_string(g.state))}, {"available", g.ok()}, {"reason", g.reason}}}};
}

// "headers": {"name.cuh": "text"}, shipped under the same rules as a task's headers (the include
// jail reads them like the source).
std::vector<Header> requested_headers(const json& request, const char* op) {
  std::vector<Header> headers;
  const auto it = request.find("headers");
  if (it == request.end()) return headers;
  auto typed = [&](bool ok, const char* expected) {
    if (!ok) throw std::invalid_argument(std::string(op) + ": \"headers\" must be " + expected);
  };
  typed(it->is_object(), "an object {\"name.cuh\": \"header text\"}");
  for (const auto& [name, text] : it->items()) {
    typed(text.is_string(), "an object whose values are the headers' text");
    headers.push_back({name, text.get<std::string>()});
  }
  return headers;
}

// The compile options a request may set, each checked for its JSON type here and for its value by
// validate(CompileOptions) in the compiler: "arch", "std", "default_device", "defines" (an object
// {"NAME": "VALUE"} or an array of "NAME[=VALUE]"), and "headers" ({"name.cuh": "text"}, shipped
// under the same rules as a task's headers: the include jail reads them like the source).
CompileJob compile_job(const json& request, const std::string& default_arch) {
  CompileJob job;
  job.source = detail::required_source(request, "compile");
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
    typed("defines", it->is_object() || it->is_array(),
          "an object {\"NAME\": \"VALUE\"} or an array of \"NAME[=VALUE]\"");
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
  job.headers = requested_headers(request, "compile");
  return job;
}

json compile_result(Evaluator& evaluator, const json& request) {
  const CompileJob job = compile_job(request, evaluator.arch());
  const CompileResult r = evaluator.compiler().compile(job);
  json out = json::parse(to_json(r));  // "kernels" from the CUBIN's symbol table, never the PTX text
  if (r.ok() && r.kernels) {
    if (std::string advice = missing_kernel_advice(job.source, job.file_name, *r.kernels); !advice.empty())
      out["advice"] = advice;
  }
  return out;
}

json eval_result(Evaluator& evaluator, const json& request) {
  const std::string& source = detail::required_source(request, "eval");
  const TaskSpec task = detail::requested_task(request);
  return json::parse(to_json(evaluator.evaluate(task, source, requested_headers(request, "eval"))));
}

// A field the handler does not read is refused, never ignored: a caller who sends {"time": false} or a
// "seed" must learn that the server decides those (it always times, and draws every seed itself).
void only_fields(const json& request, const char* op, std::initializer_list<std::string_view> fields) {
  if (const std::optional<std::string> key = detail::first_unknown_key(request, fields)) {
    std::string takes;
    for (std::string_view f : fields) takes.append(takes.empty() ? "" : ", ").append(f);
    throw std::invalid_argument(std::string(op) + ": unknown field \"" + *key + "\" (" + op + " takes " + takes + ")");
  }
}

// What the caller sees when even building an error response failed (memory exhausted).
constexpr const char* k_last_resort =
    R"({"id":null,"ok":false,"code":"internal_error","error":"the sandbox could not build a response"})";

}  // namespace

namespace detail {

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

std::string answer_request_line(std::string_view request_line, const RequestLimits& limits,
                                const RequestAnswer& answer) noexcept {
  try {
    if (request_line.size() > limits.max_request_bytes) {
      return answer_too_large(request_line.substr(0, limits.max_request_bytes), request_line.size(), limits);
    }
    json request;
    try {
      request = parse_bounded_json(request_line, {limits.max_request_bytes, limits.max_depth});
    } catch (const std::exception& e) {  // malformed, too deep, or a number out of range
      return failure("null", "parse_error", std::string("malformed request: not JSON within the limits: ") + e.what());
    }
    const std::optional<std::string_view> raw_id = request.is_object() ? raw_member(request_line, "id") : std::nullopt;
    if (!raw_id) return failure("null", "invalid_request", "malformed request: expected a JSON object with an \"id\"");
    try {
      return with_id(*raw_id, {{"ok", true}, {"result", answer(request)}});
    } catch (const std::invalid_argument& e) {  // includes TaskError: the request is wrong
      return failure(*raw_id, "bad_request", e.what());
    } catch (const json::exception& e) {
      return failure(*raw_id, "bad_request", e.what());
    } catch (const std::exception& e) {
      return failure(*raw_id, "internal_error", e.what());
    } catch (...) {
      return failure(*raw_id, "internal_error", "an unknown exception while answering");
    }
  } catch (...) {
    return k_last_resort;
  }
}

std::string answer_too_large(std::string_view start, std::size_t total_bytes, const RequestLimits& limits) noexcept {
  try {
    // A line that begins {"id": <value>, ... gets its id back, so the client can tell which request
    // it was; the value must parse on its own within the limits.
    std::string_view id = "null";
    if (const std::optional<std::string_view> raw = raw_member(start, "id", true)) {
      try {
        (void)parse_bounded_json(*raw, {limits.max_request_bytes, limits.max_depth});
        id = *raw;
      } catch (const std::exception&) {}
    }
    return failure(id, "request_too_large",
                   "the request line has " + std::to_string(total_bytes) + " bytes or more, over the limit of " +
                       std::to_string(limits.max_request_bytes) + " bytes (leap-sandbox serve --max-request-bytes)");
  } catch (...) {
    return k_last_resort;
  }
}

}  // namespace detail

RequestHandler::RequestHandler(Evaluator& evaluator, RequestLimits limits) : evaluator_(&evaluator), limits_(limits) {
  if (limits_.max_request_bytes < 1024 || limits_.max_depth < 2) {
    throw std::invalid_argument("leap::sandbox: RequestLimits need max_request_bytes >= 1024 and max_depth >= 2, got " +
                                std::to_string(limits_.max_request_bytes) + " and " +
                                std::to_string(limits_.max_depth));
  }
}

std::string RequestHandler::handle(std::string_view request_line) const noexcept {
  return detail::answer_request_line(request_line, limits_, [this](const json& request) -> json {
    const auto op_it = request.find("op");
    const std::string op = op_it != request.end() && op_it->is_string() ? op_it->get<std::string>() : "";
    if (op == "info") {
      only_fields(request, "info", {"id", "op"});
      return info_result(*evaluator_);
    }
    if (op == "compile") {
      only_fields(request, "compile", {"id", "op", "source", "arch", "std", "default_device", "defines", "headers"});
      return compile_result(*evaluator_, request);
    }
    if (op == "eval") {
      only_fields(request, "eval", {"id", "op", "task", "source", "headers"});
      return eval_result(*evaluator_, request);
    }
    throw std::invalid_argument("unknown op '" + op + "' (compile, eval or info)");
  });
}

std::string RequestHandler::too_large(std::string_view start, std::size_t total_bytes) const noexcept {
  return detail::answer_too_large(start, total_bytes, limits_);
}

}  // namespace leap::sandbox

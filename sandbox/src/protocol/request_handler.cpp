// SPDX-License-Identifier: Apache-2.0
// sandbox/src/protocol: what crosses a process boundary as text or frames. serve's request lines
// (request_line.hpp, answered here), JSON and CBOR read within bounds (bounded_json), the GPU
// runner's frames and the evaluation request and reply they carry. Not here: what an op does
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
namespace request_keys = detail::request_keys;
namespace request_ops = detail::request_ops;

json compile_pool_json(const Compiler& compiler) {
  const CompilerConfig& c = compiler.config();
  const CompilePoolStats s = compiler.pool_stats();
  const bool pooled = c.isolation == Isolation::pooled;
  return {{"isolation", pooled                              ? "pooled"
                        : c.isolation == Isolation::process ? "process"
                                                            : "trusted_in_process"},
          {"processes", pooled ? c.pool.size : 0u},
          {"max_compiles_per_process", c.pool.max_compiles_per_process},
          {"pch", pooled && c.pool.pch},
          {"pch_scratch_bytes", c.pool.pch_scratch_bytes},
          {"nvrtc_pch_heap_bytes", nvrtc_pch_heap_bytes()},
          {"processes_started", s.processes_started},
          {"processes_replaced", s.processes_replaced},
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
  const auto it = request.find(request_keys::headers);
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
  job.source = detail::required_source(request, request_ops::compile);
  auto typed = [&](const char* key, bool ok, const char* expected) {
    if (!ok) throw std::invalid_argument(std::string("compile: \"") + key + "\" must be " + expected);
  };
  job.options.arch = default_arch;
  if (const auto it = request.find(request_keys::arch); it != request.end()) {
    typed(request_keys::arch, it->is_string(), "a string such as \"sm_90\"");
    job.options.arch = it->get<std::string>();
  }
  if (const auto it = request.find(request_keys::std_version); it != request.end()) {
    typed(request_keys::std_version, it->is_number_integer(), "11, 14, 17 or 20");
    job.options.cxx_standard = it->get<int>();
  }
  if (const auto it = request.find(request_keys::default_device); it != request.end()) {
    typed(request_keys::default_device, it->is_boolean(), "true or false");
    job.options.default_device = it->get<bool>();
  }
  if (const auto it = request.find(request_keys::defines); it != request.end()) {
    typed(request_keys::defines, it->is_object() || it->is_array(),
          "an object {\"NAME\": \"VALUE\"} or an array of \"NAME[=VALUE]\"");
    if (it->is_object()) {
      for (const auto& [name, value] : it->items()) {
        typed(request_keys::defines, value.is_string(), "an object whose values are strings");
        job.options.defines.push_back({name, value.get<std::string>()});
      }
    } else {
      for (const json& d : *it) {
        typed(request_keys::defines, d.is_string(), "an array of \"NAME[=VALUE]\" strings");
        const std::string text = d.get<std::string>();
        const std::size_t eq = text.find('=');
        job.options.defines.push_back({text.substr(0, eq), eq == std::string::npos ? "" : text.substr(eq + 1)});
      }
    }
  }
  job.headers = requested_headers(request, request_ops::compile);
  return job;
}

json compile_result(Evaluator& evaluator, const json& request) {
  const CompileJob job = compile_job(request, evaluator.arch());
  CompileResult r = evaluator.compiler().compile(job);
  // Before the result is written: the advice's scan is charged to its cpu_seconds.
  const std::string advice = missing_kernel_advice(r, job.source, job.file_name);
  json out = json::parse(to_json(r));  // "kernels" from the CUBIN's symbol table, never the PTX text
  if (!advice.empty()) out["advice"] = advice;
  return out;
}

json eval_result(Evaluator& evaluator, const json& request) {
  const std::string& source = detail::required_source(request, request_ops::eval);
  const TaskSpec task = detail::requested_task(request);
  return json::parse(to_json(evaluator.evaluate(task, source, requested_headers(request, request_ops::eval))));
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

}  // namespace

namespace detail {

const std::string& required_source(const json& request, const char* op) {
  const auto it = request.find(request_keys::source);
  if (it == request.end() || !it->is_string()) {
    throw std::invalid_argument(std::string(op) + " needs a string \"source\"");
  }
  return it->get_ref<const std::string&>();
}

TaskSpec requested_task(const json& request) {
  const auto it = request.find(request_keys::task);
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
      return failure_response("null", ErrorCode::parse_error,
                              std::string("malformed request: not JSON within the limits: ") + e.what());
    }
    const std::optional<std::string_view> raw_id =
        request.is_object() ? raw_member(request_line, request_keys::id) : std::nullopt;
    if (!raw_id)
      return failure_response("null", ErrorCode::invalid_request,
                              "malformed request: expected a JSON object with an \"id\"");
    try {
      return success_response(*raw_id, answer(request));
    } catch (const std::invalid_argument& e) {  // includes TaskError: the request is wrong
      return failure_response(*raw_id, ErrorCode::bad_request, e.what());
    } catch (const json::exception& e) {
      return failure_response(*raw_id, ErrorCode::bad_request, e.what());
    } catch (const std::exception& e) {
      return failure_response(*raw_id, ErrorCode::internal_error, e.what());
    } catch (...) {
      return failure_response(*raw_id, ErrorCode::internal_error, "an unknown exception while answering");
    }
  } catch (...) {
    return detail::k_last_resort_response;
  }
}

std::string answer_too_large(std::string_view start, std::size_t total_bytes, const RequestLimits& limits) noexcept {
  try {
    // A line that begins {"id": <value>, ... gets its id back, so the client can tell which request
    // it was; the value must parse on its own within the limits.
    std::string_view id = "null";
    if (const std::optional<std::string_view> raw = raw_member(start, request_keys::id, true)) {
      try {
        (void)parse_bounded_json(*raw, {limits.max_request_bytes, limits.max_depth});
        id = *raw;
      } catch (const std::exception&) {}
    }
    return failure_response(id, ErrorCode::request_too_large,
                            "the request line has " + std::to_string(total_bytes) +
                                " bytes or more, over the limit of " + std::to_string(limits.max_request_bytes) +
                                " bytes (leap-sandbox serve --max-request-bytes)");
  } catch (...) {
    return detail::k_last_resort_response;
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
    const std::string op = detail::requested_op(request);
    if (op == request_ops::info) {
      only_fields(request, request_ops::info, {request_keys::id, request_keys::op});
      return info_result(*evaluator_);
    }
    if (op == request_ops::compile) {
      only_fields(
          request, request_ops::compile,
          {request_keys::id, request_keys::op, request_keys::source, request_keys::arch, request_keys::std_version,
           request_keys::default_device, request_keys::defines, request_keys::headers});
      return compile_result(*evaluator_, request);
    }
    if (op == request_ops::eval) {
      only_fields(
          request, request_ops::eval,
          {request_keys::id, request_keys::op, request_keys::task, request_keys::source, request_keys::headers});
      return eval_result(*evaluator_, request);
    }
    throw std::invalid_argument("unknown op '" + op + "' (compile, eval or info)");
  });
}

std::string RequestHandler::too_large(std::string_view start, std::size_t total_bytes) const noexcept {
  return detail::answer_too_large(start, total_bytes, limits_);
}

}  // namespace leap::sandbox

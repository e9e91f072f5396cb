// SPDX-License-Identifier: Apache-2.0
#include "protocol/request_codec.hpp"

#include "protocol/bounded_json.hpp"

namespace leap::sandbox::detail {

using nlohmann::json;

std::string_view to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::parse_error: return "parse_error";
    case ErrorCode::request_too_large: return "request_too_large";
    case ErrorCode::invalid_request: return "invalid_request";
    case ErrorCode::bad_request: return "bad_request";
    case ErrorCode::internal_error: return "internal_error";
    case ErrorCode::dead_lettered: return "dead_lettered";
  }
  return "internal_error";
}

std::string response_with_id(std::string_view raw_id, const json& body) {
  const std::string rest = protocol_line(body);  // "{...}"
  std::string out;
  out.reserve(raw_id.size() + rest.size() + 8);
  out += "{\"";
  out += request_keys::id;
  out += "\":";
  out += raw_id;
  if (rest.size() > 2) out += ',';
  out.append(rest, 1, std::string::npos);
  return out;
}

std::string success_response(std::string_view raw_id, const json& result) {
  return response_with_id(raw_id, {{request_keys::ok, true}, {request_keys::result, result}});
}

std::string failure_response(std::string_view raw_id, ErrorCode code, const std::string& error) {
  return response_with_id(
      raw_id, {{request_keys::ok, false}, {request_keys::code, to_string(code)}, {request_keys::error, error}});
}

std::optional<std::string> raw_request_id(std::string_view line, const RequestLimits& limits) {
  try {
    if (line.size() > limits.max_request_bytes) return std::nullopt;
    if (!parse_bounded_json(line, {limits.max_request_bytes, limits.max_depth}).is_object()) return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (const std::optional<std::string_view> raw = raw_member(line, request_keys::id)) return std::string(*raw);
  return std::nullopt;
}

json info_request() { return {{request_keys::op, request_ops::info}}; }

json compile_request(std::string_view source, std::string_view arch) {
  json request = {{request_keys::op, request_ops::compile}, {request_keys::source, source}};
  if (!arch.empty()) request[request_keys::arch] = arch;
  return request;
}

json eval_request(json task, std::string_view source) {
  return {{request_keys::op, request_ops::eval}, {request_keys::task, std::move(task)}, {request_keys::source, source}};
}

std::string protocol_line(const json& message) { return message.dump(-1, ' ', false, json::error_handler_t::replace); }

bool has_request_id(const json& request) { return request.contains(request_keys::id); }

std::string requested_op(const json& request) {
  if (!request.is_object()) return {};
  const auto op = request.find(request_keys::op);
  return op != request.end() && op->is_string() ? op->get<std::string>() : std::string();
}

void set_request_id(json& request, std::uint64_t id) { request[request_keys::id] = id; }

std::optional<ReadResponse> read_response(const json& response) {
  if (!response.is_object()) return std::nullopt;
  const auto id = response.find(request_keys::id);
  if (id == response.end() || !id->is_number_unsigned()) return std::nullopt;
  ReadResponse r;
  r.id = id->get<std::uint64_t>();
  if (const auto ok = response.find(request_keys::ok); ok != response.end() && ok->is_boolean()) r.ok = ok->get<bool>();
  if (const auto result = response.find(request_keys::result); result != response.end())
    r.result = protocol_line(*result);
  if (const auto e = response.find(request_keys::error); e != response.end() && e->is_string()) {
    r.error = e->get<std::string>();
  }
  return r;
}

std::optional<ErrorCode> response_error_code(std::string_view response_line) {
  // Scanned, not parsed: the codes are plain names, so the value as written is the quoted name.
  const std::optional<std::string_view> code = raw_member(response_line, request_keys::code);
  if (!code) return std::nullopt;
  for (const ErrorCode known : {ErrorCode::parse_error, ErrorCode::request_too_large, ErrorCode::invalid_request,
                                ErrorCode::bad_request, ErrorCode::internal_error, ErrorCode::dead_lettered}) {
    const std::string_view name = to_string(known);
    if (code->size() == name.size() + 2 && code->front() == '"' && code->back() == '"' &&
        code->substr(1, name.size()) == name) {
      return known;
    }
  }
  return std::nullopt;
}

}  // namespace leap::sandbox::detail

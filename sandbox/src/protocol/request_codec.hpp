// SPDX-License-Identifier: Apache-2.0
// The request protocol's envelope (docs/serve-protocol.md): the keys every request and response
// carries, the error codes, failure responses, and the client's side: building the requests the
// fleet client sends (refused when the sandbox's reader could not read them) and reading the
// responses it gets. What each op reads is request_handler.cpp's. The one place these keys are
// spelled. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "leap/sandbox/request_encoding_error.hpp"
#include "leap/sandbox/request_handler.hpp"

namespace leap::sandbox::detail {

namespace request_keys {
inline constexpr const char* id = "id";          // the caller's; answered as written
inline constexpr const char* op = "op";          // "info", "compile" or "eval"
inline constexpr const char* ok = "ok";          // the response: answered, or a failure
inline constexpr const char* result = "result";  // with ok: what the op gave
inline constexpr const char* code = "code";      // without ok: an ErrorCode
inline constexpr const char* error = "error";    // without ok: in words
// What the ops read (request_handler.cpp).
inline constexpr const char* source = "source";
inline constexpr const char* task = "task";
inline constexpr const char* arch = "arch";
inline constexpr const char* std_version = "std";
inline constexpr const char* default_device = "default_device";
inline constexpr const char* defines = "defines";
inline constexpr const char* headers = "headers";
}  // namespace request_keys

// The names of the ops.
namespace request_ops {
inline constexpr const char* info = "info";
inline constexpr const char* compile = "compile";
inline constexpr const char* eval = "eval";
}  // namespace request_ops

// What the caller sees when even building an error response failed (memory exhausted).
inline constexpr const char* k_last_resort_response =
    R"({"id":null,"ok":false,"code":"internal_error","error":"the sandbox could not build a response"})";

// The codes a failure response carries.
enum class ErrorCode {
  parse_error,        // not JSON within the limits
  request_too_large,  // longer than the line limit
  invalid_request,    // JSON, but not an object with an "id"
  bad_request,        // the request itself is wrong
  internal_error,     // the sandbox failed while answering; may be retried
  dead_lettered,      // the fleet only: delivered too often without an answer, not run again
};
std::string_view to_string(ErrorCode code) noexcept;

// {"id": <raw_id as written>, <body's members>}; `raw_id` is JSON text, `body` an object without "id".
std::string response_with_id(std::string_view raw_id, const nlohmann::json& body);
// A success response: {"id": ..., "ok": true, "result": ...}.
std::string success_response(std::string_view raw_id, const nlohmann::json& result);
// A failure response: {"id": ..., "ok": false, "code": ..., "error": ...}. `raw_id` "null" when unknown.
std::string failure_response(std::string_view raw_id, ErrorCode code, const std::string& error);
// The "id" of a request line as written, when the line is a JSON object within `limits` that has one.
std::optional<std::string> raw_request_id(std::string_view line, const RequestLimits& limits);

// The client's side. Requests without an id; the client numbers them with set_request_id.
nlohmann::json info_request();
nlohmann::json compile_request(std::string_view source, std::string_view arch);  // arch empty: the server's
nlohmann::json eval_request(nlohmann::json task, std::string_view source);       // a built-in's name or a spec object
bool has_request_id(const nlohmann::json& request);
// A response (or a part of one) as one line of the protocol: what the sandbox writes. Invalid UTF-8
// (a compiler's log may hold any bytes) is replaced, never thrown on. Requests go through request_line.
std::string protocol_line(const nlohmann::json& message);
// A request as one line of the protocol, exactly as given, when the reader of `limits`
// (answer_request_line: serve, a fleet member) reads it back; else throws RequestEncodingError naming
// the first value in the line's order that it could not read, or for a line too long the largest
// member: a string or key that is not valid UTF-8, a NaN or infinite number, arrays and objects nested
// past max_depth (the request is level 1), a line past max_request_bytes. Never replaces anything:
// the sandbox gets the candidate's text as it is or not at all. Walks without recursion.
std::string request_line(const nlohmann::json& request, const RequestLimits& limits);
// JSON text a caller gave for a request, or for its member `field` (e.g. a task spec), parsed; throws
// RequestEncodingError naming the value where the text stops being JSON the sandbox reads ("task.
// tolerance" for a NaN there): NaN, Infinity, a number past a double's range, invalid UTF-8, malformed.
nlohmann::json parse_request_text(std::string_view text, const std::string& field);
// The offset of the first byte of `text` that begins no well-formed UTF-8 character (Unicode's table
// 3-7: no overlong forms, no surrogates, nothing past U+10FFFF, as the JSON parser checks), or npos.
std::size_t invalid_utf8_at(std::string_view text) noexcept;
// The op a request names; empty when it is not an object or its "op" is missing or not a string.
std::string requested_op(const nlohmann::json& request);
void set_request_id(nlohmann::json& request, std::uint64_t id);

// A response as the client reads it: its id (the client's ids are unsigned integers; nullopt for
// "id": null, the answer to a line the sandbox could not read), ok, the result (as JSON text), and a
// failure's code and error.
struct ReadResponse {
  std::optional<std::uint64_t> id;
  bool ok = false;
  std::optional<std::string> result;
  std::string code;  // as the response spells it ("parse_error", ...); empty when ok or absent
  std::string error;
};
// nullopt when `response` is not an object whose id is an unsigned integer or null (not a response to
// any request of ours).
std::optional<ReadResponse> read_response(const nlohmann::json& response);

}  // namespace leap::sandbox::detail

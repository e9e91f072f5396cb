// SPDX-License-Identifier: Apache-2.0
// JSON text and CBOR read with a size and nesting limit checked before the parser runs, so a hostile
// document is refused with a clear message instead of exhausting memory or the stack (nlohmann's
// CBOR reader and its serialiser recurse once per nesting level). Internal.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace leap::sandbox::detail {

struct JsonLimits {
  std::size_t max_bytes = std::size_t{4} << 20;
  int max_depth = 64;  // arrays and objects inside one another; the top-level value is depth 1
};

// A document past a limit; the message names the limit.
class JsonLimitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The deepest nesting of arrays and objects in JSON text, found without parsing (strings are skipped
// with their escapes), stopping early once `stop_above` is passed. Malformed text gets some number;
// the parser reports what is wrong with it.
int json_text_depth(std::string_view text, int stop_above);

// Throws JsonLimitError past a limit, nlohmann::json::parse_error for malformed text.
nlohmann::json parse_bounded_json(std::string_view text, const JsonLimits& limits);

// The bytes of member `key`'s value in the JSON object `text`, exactly as written (the last one when
// the key repeats, as the parser keeps it). Scans without recursion and checks every bound, so it
// may run on text the parser has not seen; nullopt when `text` does not begin with such an object
// member, or (with `first_only`) when `key` is not the first member (for a line too long to keep
// whole, whose start is all there is).
std::optional<std::string_view> raw_member(std::string_view text, std::string_view key, bool first_only = false);

// Walks CBOR without recursion: an empty string when `bytes` is exactly one well-formed item within
// the limits, else what is wrong. Tags are refused (the runner protocol never writes one), and no
// length may claim more items or bytes than remain.
std::string cbor_problem(std::string_view bytes, const JsonLimits& limits);

// Throws JsonLimitError when cbor_problem finds one, nlohmann's exceptions for anything it still rejects.
nlohmann::json decode_bounded_cbor(std::string_view bytes, const JsonLimits& limits);

}  // namespace leap::sandbox::detail

// SPDX-License-Identifier: Apache-2.0
#include "protocol/request_codec.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "common/shortened.hpp"
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

std::size_t invalid_utf8_at(std::string_view text) noexcept {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    if (n - i >= 8) {  // eight ASCII bytes at a time: a kernel's source is mostly ASCII
      std::uint64_t word = 0;
      std::memcpy(&word, s + i, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    // Unicode's table 3-7: the lead byte fixes the length and the range of the second byte.
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c == 0xE0) {
      length = 3;
      low = 0xA0;  // no overlong form
    } else if (c == 0xED) {
      length = 3;
      high = 0x9F;  // no surrogate
    } else if (c >= 0xE1 && c <= 0xEF) {
      length = 3;
    } else if (c == 0xF0) {
      length = 4;
      low = 0x90;  // no overlong form
    } else if (c >= 0xF1 && c <= 0xF3) {
      length = 4;
    } else if (c == 0xF4) {
      length = 4;
      high = 0x8F;  // nothing past U+10FFFF
    } else {
      return i;
    }
    if (n - i < length || s[i + 1] < low || s[i + 1] > high) return i;
    for (std::size_t k = 2; k < length; ++k) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

namespace {

// A key as a message quotes it: JSON text (invalid UTF-8 replaced), cut to its start.
std::string quoted_key(const std::string& key) { return shortened(protocol_line(json(key)), 60, 57); }

// `key` appended to the path `path`: "task.inputs", or task["a key"] where the key is not a plain name.
void append_key(std::string& path, const std::string& key) {
  const bool plain =
      !key.empty() && !(key[0] >= '0' && key[0] <= '9') && std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      });
  if (plain) {
    if (!path.empty()) path += '.';
    path += key;
  } else {
    path += '[' + quoted_key(key) + ']';
  }
}

std::string utf8_problem(std::string_view text, std::size_t at) {
  static constexpr char hex[] = "0123456789ABCDEF";
  const auto byte = static_cast<unsigned char>(text[at]);
  const std::size_t line =
      1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  return std::string("is not valid UTF-8: byte 0x") + hex[byte >> 4] + hex[byte & 15] + " at offset " +
         std::to_string(at) + " (line " + std::to_string(line) +
         ") begins no well-formed character. The sandbox reads UTF-8 text only and would answer the line "
         "parse_error, and the text is not sent altered: replace or remove the invalid bytes (decode a model's "
         "output with U+FFFD for each invalid byte)";
}

// What the sandbox's reader could not read in a value that is not an array or object; empty when it can.
std::string scalar_problem(const json& value) {
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    const std::size_t at = invalid_utf8_at(text);
    return at == std::string_view::npos ? std::string() : utf8_problem(text, at);
  }
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::isfinite(d)) return {};
    const char* name = std::isnan(d) ? "NaN" : d > 0 ? "Infinity" : "-Infinity";
    return std::string("is ") + name +
           ": JSON has no NaN or Infinity (the line would carry null instead), and the sandbox reads finite "
           "numbers only; send a finite number or null";
  }
  if (value.is_binary()) return "is binary data, which JSON has no form for; send it as text (base64, hex)";
  return {};
}

// One array or object being walked: its value, the member the walk is at, and that member's index.
struct Frame {
  const json* value;
  json::const_iterator at;
  std::size_t index = 0;
};

// The path of the member each of the first `count` frames is at (all of them: down to the innermost).
std::string path_of(const std::vector<Frame>& frames, std::size_t count = std::string::npos) {
  std::string path;
  for (std::size_t k = 0; k < std::min(count, frames.size()); ++k) {
    const Frame& f = frames[k];
    if (f.value->is_object()) {
      append_key(path, f.at.key());
    } else {
      path += '[' + std::to_string(f.index) + ']';
    }
  }
  return path;
}

// Throws RequestEncodingError for the first value, in the line's order, that the reader could not read.
void check_readable(const json& request, int max_depth) {
  if (!request.is_array() && !request.is_object()) {
    if (std::string problem = scalar_problem(request); !problem.empty()) throw RequestEncodingError("", problem);
    return;
  }
  std::vector<Frame> frames;
  frames.push_back({&request, request.cbegin()});
  while (!frames.empty()) {
    Frame& top = frames.back();
    if (top.at == top.value->cend()) {
      frames.pop_back();
      if (!frames.empty()) {
        ++frames.back().at;
        ++frames.back().index;
      }
      continue;
    }
    if (top.value->is_object()) {
      const std::string& key = top.at.key();
      if (const std::size_t at = invalid_utf8_at(key); at != std::string_view::npos) {  // said of the object
        throw RequestEncodingError(path_of(frames, frames.size() - 1),
                                   "has a key " + quoted_key(key) + " that " + utf8_problem(key, at));
      }
    }
    const json& value = *top.at;
    if (value.is_array() || value.is_object()) {
      if (static_cast<int>(frames.size()) + 1 > max_depth) {
        throw RequestEncodingError(path_of(frames), "nests arrays and objects " + std::to_string(frames.size() + 1) +
                                                        " levels deep (the request itself is level 1), past the "
                                                        "sandbox's limit of " +
                                                        std::to_string(max_depth) +
                                                        " (leap-sandbox serve --max-depth)");
      }
      frames.push_back({&value, value.cbegin()});
      continue;
    }
    if (std::string problem = scalar_problem(value); !problem.empty())
      throw RequestEncodingError(path_of(frames), problem);
    ++top.at;
    ++top.index;
  }
}

// Follows a parse to say where in the document it failed: the path of the value being read.
class PathAtError final : public json::json_sax_t {
 public:
  explicit PathAtError(std::string field) : field_(std::move(field)) {}
  std::string path;  // set when the parse fails

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(json::number_integer_t) override { return value(); }
  bool number_unsigned(json::number_unsigned_t) override { return value(); }
  bool number_float(json::number_float_t, const json::string_t&) override { return value(); }
  bool string(json::string_t&) override { return value(); }
  bool binary(json::binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(json::string_t& k) override {
    levels_.back().key = k;
    levels_.back().has_key = true;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const json::exception&) override {
    path = field_;
    for (const Level& l : levels_) {
      if (l.object && l.has_key) append_key(path, l.key);
      if (!l.object) path += '[' + std::to_string(l.index) + ']';
    }
    return false;
  }

 private:
  struct Level {
    bool object = false;
    bool has_key = false;  // an object: a key was read and its value is being read
    std::string key;
    std::size_t index = 0;  // an array: the element being read
  };
  bool open(bool object) {
    levels_.push_back({object});
    return true;
  }
  bool close() {
    levels_.pop_back();
    return value();
  }
  bool value() {  // a value ended: the next one is another member
    if (!levels_.empty()) {
      if (levels_.back().object) levels_.back().has_key = false;
      else ++levels_.back().index;
    }
    return true;
  }
  std::string field_;
  std::vector<Level> levels_;
};

}  // namespace

json parse_request_text(std::string_view text, const std::string& field) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // parse_error; out_of_range for a number past a double's range
    PathAtError where(field);
    (void)json::sax_parse(text, &where);
    // The parser's message quotes the text it last read: invalid UTF-8 there is shown as '?'.
    std::string why = shortened(e.what(), 300, 297);
    for (std::size_t at; (at = invalid_utf8_at(why)) != std::string_view::npos;) why[at] = '?';
    // The parser stops at the first character of NaN or Infinity (after the sign of -Infinity).
    const auto* parse_error = dynamic_cast<const json::parse_error*>(&e);
    const std::size_t byte = parse_error != nullptr ? parse_error->byte : 0;
    const std::string_view rest = text.substr(std::min<std::size_t>(byte > 0 ? byte - 1 : 0, text.size()));
    const bool not_finite = parse_error != nullptr && (rest.starts_with("NaN") || rest.starts_with("Infinity"));
    const char* hint = not_finite ? " (JSON has no NaN or Infinity: send a finite number or null)" : "";
    throw RequestEncodingError(where.path, std::string("is not JSON the sandbox can read") + hint + ": " + why);
  }
}

std::string request_line(const json& request, const RequestLimits& limits) {
  check_readable(request, limits.max_depth);
  std::string line = request.dump(-1, ' ', false, json::error_handler_t::strict);  // all of it checked: no throw
  if (line.size() > limits.max_request_bytes) {
    // The largest member takes the blame, as Python's client gives it: in an eval, the source or the task.
    std::string largest;
    std::size_t largest_bytes = 0;
    if (request.is_object()) {
      for (auto it = request.cbegin(); it != request.cend(); ++it) {
        const std::size_t bytes = it->dump().size();
        if (bytes > largest_bytes) {
          largest_bytes = bytes;
          largest.clear();
          append_key(largest, it.key());
        }
      }
    }
    throw RequestEncodingError(largest, "takes " + std::to_string(largest_bytes) + " bytes of a request line of " +
                                            std::to_string(line.size()) + ", past the sandbox's limit of " +
                                            std::to_string(limits.max_request_bytes) +
                                            " bytes for a line (leap-sandbox serve and fleet-member "
                                            "--max-request-bytes)");
  }
  return line;
}

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
  if (id == response.end() || !(id->is_number_unsigned() || id->is_null())) return std::nullopt;
  ReadResponse r;
  if (id->is_number_unsigned()) r.id = id->get<std::uint64_t>();
  if (const auto ok = response.find(request_keys::ok); ok != response.end() && ok->is_boolean()) r.ok = ok->get<bool>();
  if (const auto result = response.find(request_keys::result); result != response.end())
    r.result = protocol_line(*result);
  if (const auto code = response.find(request_keys::code); code != response.end() && code->is_string() && !r.ok) {
    r.code = code->get<std::string>();
  }
  if (const auto e = response.find(request_keys::error); e != response.end() && e->is_string()) {
    r.error = e->get<std::string>();
  }
  return r;
}

}  // namespace leap::sandbox::detail

// SPDX-License-Identifier: Apache-2.0
#include "common/bounded_json.hpp"

#include <cstdint>
#include <vector>

namespace leap::sandbox::detail {

int json_text_depth(std::string_view text, int stop_above) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character cannot end the string
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > stop_above) return deepest;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

nlohmann::json parse_bounded_json(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.max_bytes) {
    throw JsonLimitError("the document is " + std::to_string(text.size()) + " bytes, over the limit of " +
                         std::to_string(limits.max_bytes));
  }
  if (json_text_depth(text, limits.max_depth) > limits.max_depth) {
    throw JsonLimitError("arrays and objects are nested more than " + std::to_string(limits.max_depth) +
                         " levels deep (the limit)");
  }
  return nlohmann::json::parse(text);
}

namespace {

std::size_t skip_space(std::string_view t, std::size_t i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n')) ++i;
  return i;
}

// The end of the string token starting at t[i] == '"'; npos when it does not end.
std::size_t skip_string(std::string_view t, std::size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\') ++i;
    else if (t[i] == '"') return i + 1;
  }
  return std::string_view::npos;
}

// The end of the value starting at t[i]; npos when it does not end within t.
std::size_t skip_value(std::string_view t, std::size_t i) {
  if (i >= t.size()) return std::string_view::npos;
  if (t[i] == '"') return skip_string(t, i);
  if (t[i] == '[' || t[i] == '{') {
    std::size_t depth = 0;
    while (i < t.size()) {
      const char c = t[i];
      if (c == '"') {
        i = skip_string(t, i);
        if (i == std::string_view::npos) return i;
        continue;
      }
      if (c == '[' || c == '{') ++depth;
      else if ((c == ']' || c == '}') && --depth == 0) return i + 1;
      ++i;
    }
    return std::string_view::npos;
  }
  const std::size_t start = i;
  while (i < t.size() && t[i] != ',' && t[i] != '}' && t[i] != ']' && t[i] != ' ' && t[i] != '\t' && t[i] != '\r' &&
         t[i] != '\n') {
    ++i;
  }
  return i == start || i == t.size() ? std::string_view::npos : i;  // a scalar is followed by something
}

// Whether the string token `raw` (quotes included) spells `key`; escapes are decoded by the parser.
bool key_is(std::string_view raw, std::string_view key) {
  const std::string_view inner = raw.substr(1, raw.size() - 2);
  if (inner.find('\\') == std::string_view::npos) return inner == key;
  try {
    return nlohmann::json::parse(raw).get_ref<const std::string&>() == key;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

}  // namespace

std::optional<std::string_view> raw_member(std::string_view text, std::string_view key, bool first_only) {
  std::size_t i = skip_space(text, text.starts_with("\xEF\xBB\xBF") ? 3 : 0);  // the parser skips a UTF-8 BOM too
  if (i >= text.size() || text[i] != '{') return std::nullopt;
  i = skip_space(text, i + 1);
  std::optional<std::string_view> found;
  while (i < text.size() && text[i] == '"') {
    const std::size_t key_end = skip_string(text, i);
    if (key_end == std::string_view::npos) return found;
    const bool wanted = key_is(text.substr(i, key_end - i), key);
    i = skip_space(text, key_end);
    if (i >= text.size() || text[i] != ':') return found;
    i = skip_space(text, i + 1);
    const std::size_t value_end = skip_value(text, i);
    if (value_end == std::string_view::npos) return found;
    if (wanted) found = text.substr(i, value_end - i);
    if (first_only) return found;
    i = skip_space(text, value_end);
    if (i >= text.size() || text[i] != ',') return found;
    i = skip_space(text, i + 1);
  }
  return found;
}

namespace {

struct Open {
  std::uint64_t left;  // items still to read (a map counts keys and values); unused when indefinite
  bool indefinite;
};

}  // namespace

std::string cbor_problem(std::string_view bytes, const JsonLimits& limits) {
  if (bytes.size() > limits.max_bytes) {
    return "the CBOR payload is " + std::to_string(bytes.size()) + " bytes, over the limit of " +
           std::to_string(limits.max_bytes);
  }
  std::vector<Open> stack;
  std::size_t pos = 0;
  bool done = false;
  auto remaining = [&] { return static_cast<std::uint64_t>(bytes.size() - pos); };
  // One item has been read: count it against the innermost definite container, closing those it fills.
  auto item_read = [&] {
    while (!stack.empty() && !stack.back().indefinite) {
      if (--stack.back().left > 0) return;
      stack.pop_back();
    }
    if (stack.empty()) done = true;
  };
  while (!done) {
    if (pos >= bytes.size()) return "the CBOR payload ends inside an item";
    const auto initial = static_cast<unsigned char>(bytes[pos++]);
    const unsigned major = initial >> 5;
    const unsigned info = initial & 31u;
    if (initial == 0xFF) {  // break: ends the innermost indefinite container
      if (stack.empty() || !stack.back().indefinite) return "a CBOR break outside an indefinite-length item";
      stack.pop_back();
      item_read();
      continue;
    }
    std::uint64_t arg = info;
    if (info >= 24 && info <= 27) {
      const std::size_t n = std::size_t{1} << (info - 24);
      if (remaining() < n) return "the CBOR payload ends inside an item's length";
      arg = 0;
      for (std::size_t k = 0; k < n; ++k) arg = (arg << 8) | static_cast<unsigned char>(bytes[pos++]);
    } else if (info >= 28 && info <= 30) {
      return "a reserved CBOR length code";
    }
    const bool indefinite = info == 31;
    switch (major) {
      case 0:
      case 1:
        if (indefinite) return "an integer with an indefinite length";
        item_read();
        break;
      case 2:
      case 3:
        if (indefinite) {
          // Chunks of the same major type follow until a break; nesting one level is enough.
          for (;;) {
            if (pos >= bytes.size()) return "the CBOR payload ends inside a chunked string";
            const auto c = static_cast<unsigned char>(bytes[pos++]);
            if (c == 0xFF) break;
            if ((c >> 5) != major || (c & 31u) == 31u || (c & 31u) >= 28u) return "a malformed chunk in a CBOR string";
            std::uint64_t len = c & 31u;
            if (len >= 24) {
              const std::size_t n = std::size_t{1} << (len - 24);
              if (remaining() < n) return "the CBOR payload ends inside a chunk's length";
              len = 0;
              for (std::size_t k = 0; k < n; ++k) len = (len << 8) | static_cast<unsigned char>(bytes[pos++]);
            }
            if (len > remaining()) return "a CBOR string chunk longer than the bytes left";
            pos += static_cast<std::size_t>(len);
          }
        } else {
          if (arg > remaining())
            return "a CBOR string of " + std::to_string(arg) + " bytes, longer than the " +
                   std::to_string(remaining()) + " left";
          pos += static_cast<std::size_t>(arg);
        }
        item_read();
        break;
      case 4:
      case 5: {
        if (static_cast<int>(stack.size()) + 1 > limits.max_depth) {
          return "CBOR arrays and maps nested more than " + std::to_string(limits.max_depth) +
                 " levels deep (the limit)";
        }
        if (indefinite) {
          stack.push_back({0, true});
          break;
        }
        const std::uint64_t items = major == 5 ? arg * 2 : arg;
        if ((major == 5 && arg > (std::uint64_t{1} << 62)) || items > remaining()) {
          return "a CBOR " + std::string(major == 4 ? "array" : "map") + " claiming more items than bytes left";
        }
        if (items == 0) item_read();
        else stack.push_back({items, false});
        break;
      }
      case 6: return "a CBOR tag (the protocol uses none)";
      default:  // 7: simple values and floats; the argument bytes were consumed above
        if (indefinite) return "a CBOR break outside an indefinite-length item";
        item_read();
        break;
    }
  }
  if (pos != bytes.size()) return std::to_string(bytes.size() - pos) + " bytes after the CBOR item";
  return {};
}

nlohmann::json decode_bounded_cbor(std::string_view bytes, const JsonLimits& limits) {
  if (std::string problem = cbor_problem(bytes, limits); !problem.empty()) throw JsonLimitError(problem);
  return nlohmann::json::from_cbor(bytes.begin(), bytes.end());
}

}  // namespace leap::sandbox::detail

// SPDX-License-Identifier: Apache-2.0
#include "compile/leading_includes.hpp"

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>

namespace leap::sandbox::detail {
namespace {

constexpr std::string_view k_space = " \t\r\v\f";  // a newline ends a line; these do not

bool is_space(char c) noexcept { return k_space.find(c) != std::string_view::npos; }
bool is_ident(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// A backslash followed by nothing but spaces up to a newline: a splice to the preprocessor (or, with
// spaces, to some preprocessors).
bool has_splice(std::string_view text) noexcept {
  for (std::size_t i = text.find('\\'); i != std::string_view::npos; i = text.find('\\', i + 1)) {
    const std::size_t next = text.find_first_not_of(k_space, i + 1);
    if (next == std::string_view::npos || text[next] == '\n') return true;
  }
  return false;
}

enum class LineKind { blank, include, other };

struct SourceLine {
  LineKind kind = LineKind::other;
  std::string name;          // the included header, for an include
  std::size_t end = 0;       // just past the newline that ends the line
  std::size_t newlines = 0;  // in the line, its own included (a block comment may hold more)
};

// What one logical line of the leading part is, its comments already one space each.
LineKind classify(const std::string& text, std::string& name) {
  std::size_t p = text.find_first_not_of(k_space);
  if (p == std::string::npos) return LineKind::blank;
  if (text[p] != '#') return LineKind::other;
  p = text.find_first_not_of(k_space, p + 1);
  if (p == std::string::npos || text.compare(p, 7, "include") != 0) return LineKind::other;
  p += 7;
  if (p < text.size() && !is_space(text[p]) && text[p] != '<') return LineKind::other;  // #include_next, #includes
  p = text.find_first_not_of(k_space, p);
  if (p == std::string::npos || text[p] != '<') return LineKind::other;  // a quoted or computed include
  const std::size_t close = text.find('>', p + 1);
  if (close == std::string::npos) return LineKind::other;
  std::string n = text.substr(p + 1, close - p - 1);
  if (!pch_header_name_ok(n) || text.find_first_not_of(k_space, close + 1) != std::string::npos) return LineKind::other;
  name = std::move(n);
  return LineKind::include;
}

// The logical line of `s` that starts at `pos`: up to the first newline outside a comment. Anything
// this reading is not certain of makes it `other`, which ends the leading part before it.
SourceLine read_source_line(std::string_view s, std::size_t pos) {
  SourceLine out;
  std::string text;
  std::size_t i = pos;
  while (i < s.size()) {
    const char c = s[i];
    if (c == '\n') {
      ++out.newlines;
      out.end = i + 1;
      out.kind = classify(text, out.name);
      return out;
    }
    // A splice, a NUL (where NVRTC's copy of the source would end), a trigraph.
    if (c == '\\' || c == '\0' || (c == '?' && i + 1 < s.size() && s[i + 1] == '?')) return {};
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      const std::size_t e = s.find('\n', i);
      if (e == std::string_view::npos) return {};
      const std::string_view body = s.substr(i, e - i);
      const std::size_t last = body.find_last_not_of(k_space);
      // A backslash at its end would carry the comment on to the next line.
      if (body.find("??") != std::string_view::npos || body.find('\0') != std::string_view::npos || body[last] == '\\')
        return {};
      text += ' ';
      i = e;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      const std::size_t e = s.find("*/", i + 2);
      if (e == std::string_view::npos) return {};
      const std::string_view body = s.substr(i, e + 2 - i);
      // `*\` newline `/` would close it earlier than "*/" does.
      if (body.find("??") != std::string_view::npos || body.find('\0') != std::string_view::npos || has_splice(body))
        return {};
      out.newlines += static_cast<std::size_t>(std::count(body.begin(), body.end(), '\n'));
      text += ' ';
      i = e + 2;
      continue;
    }
    text += c;
    ++i;
  }
  return {};  // a last line without its newline
}

// ---- include guards ----

// The header's logical lines after splicing, comments removed (one space each; a block comment may
// join physical lines, as it does for the preprocessor). Literals are kept whole, so nothing in them
// reads as a comment or a directive. False when the text is not read with certainty.
bool logical_lines(std::string_view raw, std::vector<std::string>& lines) {
  std::string t;
  t.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (c == '?' && i + 2 < raw.size() && raw[i + 1] == '?' &&
        std::string_view("=/'()!<>-").find(raw[i + 2]) != std::string_view::npos)
      return false;  // a trigraph
    if (c == '\\') {
      if (i + 1 < raw.size() && raw[i + 1] == '\n') {
        ++i;  // a splice
        continue;
      }
      const std::size_t next = raw.find_first_not_of(k_space, i + 1);
      if (next != std::string_view::npos && next > i + 1 && raw[next] == '\n') return false;  // a splice to some
    }
    t += c;
  }
  std::string cur;
  std::size_t i = 0;
  const std::size_t n = t.size();
  while (i < n) {
    const char c = t[i];
    if (c == '\n') {
      lines.push_back(std::move(cur));
      cur.clear();
      ++i;
    } else if (c == '/' && i + 1 < n && t[i + 1] == '/') {
      i = std::min(t.find('\n', i), n);
      cur += ' ';
    } else if (c == '/' && i + 1 < n && t[i + 1] == '*') {
      const std::size_t e = t.find("*/", i + 2);
      if (e == std::string::npos) return false;
      cur += ' ';
      i = e + 2;
    } else if (c == '"' || c == '\'') {
      // To its closing quote, or (unterminated, as an apostrophe in a #warning's text) to the line's end.
      std::size_t j = i + 1;
      while (j < n && t[j] != c && t[j] != '\n') j += t[j] == '\\' && j + 1 < n && t[j + 1] != '\n' ? 2 : 1;
      const std::size_t end = j < n && t[j] == c ? j + 1 : j;
      cur.append(t, i, end - i);
      i = end;
    } else if (is_digit(c) || (c == '.' && i + 1 < n && is_digit(t[i + 1]))) {
      // A pp-number, digit separators (1'000) and exponent signs included.
      std::size_t j = i + 1;
      while (j < n) {
        const char d = t[j];
        if (is_ident(d) || d == '.') {
          ++j;
        } else if ((d == '+' || d == '-') && std::string_view("eEpP").find(t[j - 1]) != std::string_view::npos) {
          ++j;
        } else if (d == '\'' && j + 1 < n && is_ident(t[j + 1])) {
          j += 2;
        } else {
          break;
        }
      }
      cur.append(t, i, j - i);
      i = j;
    } else if (is_ident(c)) {
      std::size_t j = i;
      while (j < n && is_ident(t[j])) ++j;
      if (j < n && t[j] == '"' && t[j - 1] == 'R') return false;  // a raw string: read no further
      cur.append(t, i, j - i);
      i = j;
    } else {
      cur += c;
      ++i;
    }
  }
  if (cur.find_first_not_of(k_space) != std::string::npos) lines.push_back(std::move(cur));
  return true;
}

bool blank(const std::string& line) { return line.find_first_not_of(k_space) == std::string::npos; }

struct Directive {
  std::string name;
  std::string rest;  // trimmed
};

std::optional<Directive> directive_of(const std::string& line) {
  std::size_t p = line.find_first_not_of(k_space);
  if (p == std::string::npos || line[p] != '#') return std::nullopt;
  p = std::min(line.find_first_not_of(k_space, p + 1), line.size());
  std::size_t e = p;
  while (e < line.size() && is_ident(line[e])) ++e;
  Directive d{line.substr(p, e - p), {}};
  const std::size_t r = line.find_first_not_of(k_space, e);
  if (r != std::string::npos) d.rest = line.substr(r, line.find_last_not_of(k_space) + 1 - r);
  return d;
}

// `rest` split into identifiers and single punctuation characters.
std::vector<std::string> tokens(const std::string& rest) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < rest.size();) {
    if (is_space(rest[i])) {
      ++i;
    } else if (is_ident(rest[i])) {
      std::size_t j = i;
      while (j < rest.size() && is_ident(rest[j])) ++j;
      out.push_back(rest.substr(i, j - i));
      i = j;
    } else {
      out.emplace_back(1, rest[i++]);
    }
  }
  return out;
}

bool identifier(const std::string& t) { return !t.empty() && is_ident(t[0]) && !is_digit(t[0]); }

// The macro `#ifndef X` or `#if !defined(X)` / `#if !defined X` tests; empty for anything else.
std::string guard_tested(const Directive& d) {
  const std::vector<std::string> t = tokens(d.rest);
  if (d.name == "ifndef") return t.size() == 1 && identifier(t[0]) ? t[0] : "";
  if (d.name != "if" || t.size() < 3 || t[0] != "!" || t[1] != "defined") return "";
  if (t.size() == 3 && identifier(t[2])) return t[2];
  if (t.size() == 5 && t[2] == "(" && identifier(t[3]) && t[4] == ")") return t[3];
  return "";
}

}  // namespace

bool pch_header_name_ok(std::string_view n) noexcept {
  if (n.empty() || n.size() > 200 || n.front() == '/' || n.back() == '/') return false;
  for (char c : n) {
    const bool ok = is_ident(c) || c == '.' || c == '/' || c == '+' || c == '-';
    if (!ok) return false;
  }
  std::size_t pos = 0;
  while (pos <= n.size()) {
    const std::size_t end = std::min(n.find('/', pos), n.size());
    const std::string_view part = n.substr(pos, end - pos);
    if (part.empty() || part == "." || part == "..") return false;
    pos = end + 1;
  }
  return true;
}

LeadingIncludes leading_includes(std::string_view source, const std::function<bool(const std::string&)>& guarded) {
  LeadingIncludes out;
  std::vector<std::pair<std::size_t, std::size_t>> left_out;  // [begin, end) of each left-out repeat
  std::map<std::string, bool> seen;                           // name -> guarded, once asked
  std::size_t pos = 0;
  std::vector<std::size_t> newlines;
  while (pos < source.size()) {
    SourceLine line = read_source_line(source, pos);
    if (line.kind == LineKind::other) break;
    if (line.kind == LineKind::include) {
      const auto it = seen.find(line.name);
      if (it == seen.end()) {
        seen.emplace(line.name, false);
        out.names.push_back(line.name);
      } else {
        if (!it->second) it->second = guarded(line.name);
        if (it->second) {
          left_out.emplace_back(pos, line.end);
          newlines.push_back(line.newlines);
        } else {
          out.names.push_back(line.name);  // may mean something again
        }
      }
    }
    pos = line.end;
  }
  if (!left_out.empty()) {
    out.pch_source.reserve(source.size());
    std::size_t from = 0;
    for (std::size_t k = 0; k < left_out.size(); ++k) {
      out.pch_source.append(source.substr(from, left_out[k].first - from));
      out.pch_source.append(newlines[k], '\n');
      from = left_out[k].second;
    }
    out.pch_source.append(source.substr(from));
  }
  return out;
}

std::string pch_prefix_text(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += "#include <" + n + ">\n";
  return text;
}

bool has_include_guard(std::string_view header) {
  std::vector<std::string> lines;
  if (!logical_lines(header, lines)) return false;
  std::size_t k = 0;
  while (k < lines.size() && blank(lines[k])) ++k;
  if (k == lines.size()) return false;
  const std::optional<Directive> first = directive_of(lines[k]);
  if (!first) return false;
  if (first->name == "pragma" && tokens(first->rest) == std::vector<std::string>{"once"}) return true;
  const std::string guard = guard_tested(*first);
  if (guard.empty()) return false;
  do ++k;
  while (k < lines.size() && blank(lines[k]));
  if (k == lines.size()) return false;
  const std::optional<Directive> define = directive_of(lines[k]);
  if (!define || define->name != "define") return false;
  const std::vector<std::string> defined = tokens(define->rest);
  if (defined.empty() || defined[0] != guard) return false;
  int depth = 1;
  for (++k; k < lines.size(); ++k) {
    const std::optional<Directive> d = directive_of(lines[k]);
    if (!d) continue;
    if (d->name == "if" || d->name == "ifdef" || d->name == "ifndef") {
      ++depth;
    } else if (depth == 1 && (d->name == "else" || d->name.starts_with("elif"))) {
      return false;  // the second inclusion would take this branch
    } else if (d->name == "endif" && --depth == 0) {
      return std::all_of(lines.begin() + static_cast<std::ptrdiff_t>(k) + 1, lines.end(), blank);
    }
  }
  return false;
}

}  // namespace leap::sandbox::detail

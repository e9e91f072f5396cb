// SPDX-License-Identifier: Apache-2.0
// The include jail's scanner. It errs towards refusing: anything it cannot classify with certainty
// (an include that is not a literal, an unknown directive or pragma) is refused rather than guessed at.
#include "compile/include_jail.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstddef>
#include <filesystem>
#include <string>
#include <unordered_set>

#include "leap/sandbox/compiler.hpp"

namespace leap::sandbox {
namespace {

bool is_ident_start(char c) noexcept {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$' ||
         static_cast<unsigned char>(c) >= 0x80;
}
bool is_ident_char(char c) noexcept { return is_ident_start(c) || std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_hspace(char c) noexcept { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }
bool is_newline(char c) noexcept { return c == '\n' || c == '\r'; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Directives that cannot reach a file. Everything else is refused.
constexpr std::array<std::string_view, 14> k_plain_directives = {"define", "undef",   "if",       "ifdef", "ifndef",
                                                                 "elif",   "elifdef", "elifndef", "else",  "endif",
                                                                 "error",  "warning", "pragma",   "line"};

// First token of a pragma that is known not to touch files.
constexpr std::array<std::string_view, 22> k_pragmas = {"unroll",
                                                        "nounroll",
                                                        "once",
                                                        "pack",
                                                        "push_macro",
                                                        "pop_macro",
                                                        "nv_diag_suppress",
                                                        "nv_diag_warning",
                                                        "nv_diag_error",
                                                        "nv_diag_default",
                                                        "nv_diag_once",
                                                        "nv_diagnostic",
                                                        "diag_suppress",
                                                        "diag_warning",
                                                        "diag_error",
                                                        "diag_default",
                                                        "nv_exec_check_disable",
                                                        "hd_warning_disable",
                                                        "nv_abi",
                                                        "STDC",
                                                        "GCC",
                                                        "clang"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& set, std::string_view word) {
  return std::find(set.begin(), set.end(), word) != set.end();
}

// Phase 1-2 of translation, conservatively: remove backslash-newline splices (also with trailing
// blanks, as GCC accepts) and remember each remaining character's original line.
struct Spliced {
  std::string text;
  std::vector<int> line;  // line[i] = 1-based line of text[i] in the original
};

Spliced splice(std::string_view in) {
  Spliced out;
  out.text.reserve(in.size());
  out.line.reserve(in.size() + 1);
  int line = 1;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '\\') {
      std::size_t j = i + 1;
      while (j < in.size() && is_hspace(in[j])) ++j;
      if (j < in.size() && is_newline(in[j])) {
        if (in[j] == '\r' && j + 1 < in.size() && in[j + 1] == '\n') ++j;
        ++line;
        i = j;
        continue;
      }
    }
    out.text.push_back(c);
    out.line.push_back(line);
    if (c == '\n' || (c == '\r' && !(i + 1 < in.size() && in[i + 1] == '\n'))) ++line;
  }
  out.line.push_back(line);
  return out;
}

// The C++ standard library's headers, and the C ones device code meets most; none is available to
// device code under NVRTC unless the compatibility layer or libcu++ supplies it.
constexpr std::array<std::string_view, 97> k_standard_headers = {"algorithm",
                                                                 "any",
                                                                 "array",
                                                                 "atomic",
                                                                 "barrier",
                                                                 "bit",
                                                                 "bitset",
                                                                 "charconv",
                                                                 "chrono",
                                                                 "codecvt",
                                                                 "compare",
                                                                 "complex",
                                                                 "concepts",
                                                                 "condition_variable",
                                                                 "coroutine",
                                                                 "deque",
                                                                 "exception",
                                                                 "execution",
                                                                 "expected",
                                                                 "filesystem",
                                                                 "format",
                                                                 "forward_list",
                                                                 "fstream",
                                                                 "functional",
                                                                 "future",
                                                                 "initializer_list",
                                                                 "iomanip",
                                                                 "ios",
                                                                 "iosfwd",
                                                                 "iostream",
                                                                 "istream",
                                                                 "iterator",
                                                                 "latch",
                                                                 "list",
                                                                 "locale",
                                                                 "map",
                                                                 "memory",
                                                                 "memory_resource",
                                                                 "mutex",
                                                                 "new",
                                                                 "numbers",
                                                                 "numeric",
                                                                 "optional",
                                                                 "ostream",
                                                                 "queue",
                                                                 "random",
                                                                 "ranges",
                                                                 "ratio",
                                                                 "regex",
                                                                 "semaphore",
                                                                 "set",
                                                                 "shared_mutex",
                                                                 "source_location",
                                                                 "span",
                                                                 "sstream",
                                                                 "stack",
                                                                 "stdexcept",
                                                                 "stop_token",
                                                                 "streambuf",
                                                                 "string",
                                                                 "string_view",
                                                                 "system_error",
                                                                 "thread",
                                                                 "tuple",
                                                                 "type_traits",
                                                                 "typeindex",
                                                                 "typeinfo",
                                                                 "unordered_map",
                                                                 "unordered_set",
                                                                 "utility",
                                                                 "valarray",
                                                                 "variant",
                                                                 "vector",
                                                                 "version",
                                                                 "limits",
                                                                 "cstdint",
                                                                 "climits",
                                                                 "cfloat",
                                                                 "cmath",
                                                                 "cstdio",
                                                                 "cassert",
                                                                 "cstddef",
                                                                 "cstdlib",
                                                                 "cstring",
                                                                 "ctime",
                                                                 "cerrno",
                                                                 "cctype",
                                                                 "cinttypes",
                                                                 "cstdarg",
                                                                 "csignal",
                                                                 "cwchar",
                                                                 "time.h",
                                                                 "errno.h",
                                                                 "ctype.h",
                                                                 "stdarg.h",
                                                                 "inttypes.h",
                                                                 "stdbool.h"};

constexpr std::array<std::string_view, 4> k_runtime_headers = {"cuda_runtime.h", "cuda_runtime_api.h",
                                                               "device_launch_parameters.h", "cuda.h"};

bool is_host_framework(std::string_view name) {
  for (std::string_view p : {"torch/", "ATen/", "c10/", "caffe2/", "pybind11/", "THC/"}) {
    if (name.starts_with(p)) return true;
  }
  return name == "Python.h" || name == "torch.h" || name == "extension.h";
}

// "cmath" -> "cuda/std/cmath"; "math.h" -> "cuda/std/cmath"; "" when libcu++ has no counterpart.
std::string libcudacxx_counterpart(std::string_view name, const IncludePolicy& policy) {
  std::string base(name);
  if (base.size() > 2 && base.ends_with(".h")) base = "c" + base.substr(0, base.size() - 2);
  if (base.find('/') != std::string::npos) return {};
  const std::string candidate = "cuda/std/" + base;
  return policy.allows(candidate) ? candidate : std::string();
}

// The names of the headers a job ships, looked up once per #include: a request may ship many
// headers, and a search through all of them per #include of each would grow with their product.
using ShippedNames = std::unordered_set<std::string_view>;

class Scanner {
 public:
  Scanner(std::string_view file, const ShippedNames& shipped, const IncludePolicy& policy, const std::string& text,
          const std::vector<int>& lines)
      : file_(file), shipped_(shipped), policy_(policy), s_(text), line_(lines) {}

  JailVerdict run() {
    bool line_start = true;
    while (ok() && i_ < s_.size()) {
      const char c = s_[i_];
      if (is_newline(c)) {
        line_start = true;
        ++i_;
      } else if (is_hspace(c)) {
        ++i_;
      } else if (c == '/' && peek(1) == '/') {
        while (i_ < s_.size() && !is_newline(s_[i_])) ++i_;
      } else if (c == '/' && peek(1) == '*') {
        skip_block_comment();
      } else if (line_start && (c == '#' || (c == '%' && peek(1) == ':' && !(peek(2) == '%' && peek(3) == ':')))) {
        i_ += (c == '#') ? 1 : 2;
        directive();
        line_start = false;
      } else if (c == '"' || c == '\'') {
        quoted(c);
        line_start = false;
      } else if (std::isdigit(static_cast<unsigned char>(c)) != 0 ||
                 (c == '.' && std::isdigit(static_cast<unsigned char>(peek(1))) != 0)) {
        pp_number();
        line_start = false;
      } else if (is_ident_start(c)) {
        identifier_or_literal();
        line_start = false;
      } else {
        ++i_;
        line_start = false;
      }
    }
    verdict_.message = format_refusals(verdict_.refusals);
    return std::move(verdict_);
  }

 private:
  bool ok() const noexcept { return !stop_; }
  char peek(std::size_t k) const noexcept { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
  int line_at(std::size_t pos) const noexcept { return line_[std::min(pos, line_.size() - 1)]; }

  // Records a refusal and scans on, so one answer lists every problem of the source.
  void refuse(std::size_t pos, const std::string& what, std::string advice = {}, std::string include = {}) {
    verdict_.allowed = false;
    verdict_.refusals.push_back({std::string(file_), line_at(pos), what, std::move(advice), std::move(include)});
  }
  // A refusal after which the scanner cannot know where it is (an unterminated comment): stop.
  void fatal(std::size_t pos, const std::string& what) {
    refuse(pos, what);
    stop_ = true;
  }

  void skip_block_comment() {
    const std::size_t start = i_;
    const std::size_t end = s_.find("*/", i_ + 2);
    if (end == std::string::npos) {
      fatal(start, "unterminated comment");
      i_ = s_.size();
      return;
    }
    i_ = end + 2;
  }

  // Skips blanks and comments on the current logical line.
  void skip_line_space() {
    while (i_ < s_.size()) {
      if (is_hspace(s_[i_])) {
        ++i_;
      } else if (s_[i_] == '/' && peek(1) == '*') {
        skip_block_comment();
        if (!ok()) return;
      } else {
        return;
      }
    }
  }

  bool rest_of_line_empty() {
    skip_line_space();
    if (!ok()) return false;
    if (i_ < s_.size() && s_[i_] == '/' && peek(1) == '/') {
      while (i_ < s_.size() && !is_newline(s_[i_])) ++i_;
    }
    return i_ >= s_.size() || is_newline(s_[i_]);
  }

  std::string word() {
    const std::size_t start = i_;
    while (i_ < s_.size() && is_ident_char(s_[i_])) ++i_;
    return std::string(s_.substr(start, i_ - start));
  }

  // A string or character literal; ends at the closing quote or, unterminated, at the end of the line.
  std::string quoted(char q) {
    std::string body;
    ++i_;
    while (i_ < s_.size() && !is_newline(s_[i_])) {
      const char c = s_[i_];
      if (c == '\\' && i_ + 1 < s_.size() && !is_newline(s_[i_ + 1])) {
        body.push_back(c);
        body.push_back(s_[i_ + 1]);
        i_ += 2;
        continue;
      }
      ++i_;
      if (c == q) return body;
      body.push_back(c);
    }
    return body;
  }

  void raw_string() {  // at the opening quote of R"delim( ... )delim"
    const std::size_t start = i_;
    const std::size_t open = s_.find('(', i_ + 1);
    if (open == std::string::npos || open - i_ - 1 > 16) {
      fatal(start, "malformed raw string literal");
      return;
    }
    std::string close(1, ')');  // built by append: GCC 12 warns falsely (-Wrestrict) on operator+ here
    close.append(s_.substr(i_ + 1, open - i_ - 1));
    close.push_back('"');
    const std::size_t end = s_.find(close, open + 1);
    if (end == std::string::npos) {
      fatal(start, "unterminated raw string literal");
      i_ = s_.size();
      return;
    }
    i_ = end + close.size();
  }

  void pp_number() {
    ++i_;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if ((c == '+' || c == '-') && i_ > 0 && std::string_view("eEpP").find(s_[i_ - 1]) != std::string_view::npos) {
        ++i_;
      } else if (c == '\'' && is_ident_char(peek(1))) {
        i_ += 2;  // digit separator
      } else if (is_ident_char(c) || c == '.') {
        ++i_;
      } else {
        break;
      }
    }
  }

  void identifier_or_literal() {
    const std::size_t start = i_;
    const std::string w = word();
    const char next = i_ < s_.size() ? s_[i_] : '\0';
    static constexpr std::array<std::string_view, 5> prefixes = {"u8", "u", "U", "L", ""};
    if (next == '"' || next == '\'') {
      for (std::string_view p : prefixes) {
        if (w == p && !w.empty()) {
          quoted(next);
          return;
        }
        if (next == '"' && w.size() == p.size() + 1 && w.back() == 'R' && w.compare(0, p.size(), p) == 0) {
          raw_string();
          return;
        }
      }
    }
    check_identifier(start, w);
  }

  void check_identifier(std::size_t pos, const std::string& w) {
    const std::string low = lower(w);
    if (low.find("has_include") != std::string::npos || low.find("has_embed") != std::string::npos) {
      refuse(pos, "'" + w + "' (probing for files is not allowed)",
             "include the header unconditionally: every toolkit header is available here");
      return;
    }
    if (w == "_Pragma" || w == "__pragma") {
      pragma_operator(pos, w);
      return;
    }
    if (low.find("pragma") != std::string::npos) {
      refuse(pos, "'" + w + "' (only literal _Pragma(\"...\") and #pragma lines are allowed)");
    }
  }

  void pragma_operator(std::size_t pos, const std::string& w) {
    while (i_ < s_.size() && (is_hspace(s_[i_]) || is_newline(s_[i_]))) ++i_;
    if (i_ >= s_.size() || s_[i_] != '(') {
      refuse(pos, w + " without a parenthesised string literal");
      return;
    }
    ++i_;
    while (i_ < s_.size() && (is_hspace(s_[i_]) || is_newline(s_[i_]))) ++i_;
    std::size_t lit = i_;
    if (i_ < s_.size() && (s_[i_] == 'L' || s_[i_] == 'u' || s_[i_] == 'U')) ++i_;  // encoding prefix
    if (i_ >= s_.size() || s_[i_] != '"') {
      refuse(lit, w + " whose argument is not a string literal");
      return;
    }
    const std::string body = quoted('"');
    check_pragma_text(pos, body);
  }

  void check_pragma_text(std::size_t pos, std::string_view text) {
    std::size_t k = 0;
    while (k < text.size() && (is_hspace(text[k]) || text[k] == ' ')) ++k;
    std::size_t e = k;
    while (e < text.size() && is_ident_char(text[e])) ++e;
    const std::string_view first = text.substr(k, e - k);
    if (!contains(k_pragmas, first)) {
      refuse(pos, "#pragma '" + std::string(first) + "' is not on the allow-list", "remove the pragma");
      return;
    }
    if (first == "GCC" || first == "clang") {
      std::size_t k2 = e;
      while (k2 < text.size() && is_hspace(text[k2])) ++k2;
      std::size_t e2 = k2;
      while (e2 < text.size() && is_ident_char(text[e2])) ++e2;
      const std::string_view second = text.substr(k2, e2 - k2);
      if (second != "diagnostic" && second != "unroll" && second != "ivdep") {
        refuse(pos, "#pragma '" + std::string(first) + " " + std::string(second) + "' is not on the allow-list",
               "remove the pragma");
      }
    }
  }

  void directive() {
    const std::size_t pos = i_ > 0 ? i_ - 1 : 0;
    skip_line_space();
    if (!ok()) return;
    if (i_ >= s_.size() || is_newline(s_[i_])) return;            // the null directive
    if (std::isdigit(static_cast<unsigned char>(s_[i_])) != 0) {  // GNU line marker: # 12 "file"
      line_directive(pos);
      return;
    }
    if (!is_ident_start(s_[i_])) {
      refuse(pos, "malformed preprocessing directive");
      return;
    }
    const std::string name = word();
    if (name == "include") {
      include_directive(pos);
    } else if (name == "pragma") {
      const std::size_t start = i_;
      while (i_ < s_.size() && !is_newline(s_[i_])) ++i_;
      check_pragma_text(pos, std::string_view(s_).substr(start, i_ - start));
      // Any _Pragma or has_include inside the line is still seen: rescan it as ordinary text.
      i_ = start;
    } else if (name == "line") {
      line_directive(pos);
    } else if (!contains(k_plain_directives, name)) {
      refuse(pos, "#" + name + " is not allowed");
    }
    // The rest of a plain directive (#define bodies, #if expressions) is scanned as ordinary tokens.
  }

  void line_directive(std::size_t pos) {
    while (i_ < s_.size() && !is_newline(s_[i_])) {
      if (s_[i_] == '"' || s_[i_] == '<' || is_ident_start(s_[i_])) {
        refuse(pos, "#line with a file name or macro is not allowed");
        return;
      }
      ++i_;
    }
  }

  void include_directive(std::size_t pos) {
    skip_line_space();
    if (!ok()) return;
    if (i_ >= s_.size() || (s_[i_] != '"' && s_[i_] != '<')) {
      std::size_t e = i_;
      while (e < s_.size() && !is_newline(s_[e])) ++e;
      refuse(pos,
             "#include " + std::string(s_.substr(i_, std::min<std::size_t>(e - i_, 80))) +
                 " (the operand is not a literal \"name\" or <name>; macro-built includes are refused)",
             "write the header's name literally, e.g. #include <cuda_fp16.h>");
      return;
    }
    const char close = s_[i_] == '"' ? '"' : '>';
    const std::size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != close && !is_newline(s_[i_])) ++i_;
    if (i_ >= s_.size() || s_[i_] != close) {
      refuse(pos, "unterminated #include name");
      return;
    }
    const std::string name(s_.substr(start, i_ - start));
    ++i_;
    const std::string shown = (close == '"' ? "\"" + name + "\"" : "<" + name + ">");
    if (!rest_of_line_empty()) {
      if (ok())
        refuse(pos, "#include " + shown + " followed by extra tokens", "write one header name per #include line", name);
      return;
    }
    if (!shipped_.contains(name) && !policy_.allows(name)) {
      refuse(pos, "#include " + shown, include_advice(name, policy_), name);
      return;
    }
    verdict_.includes.push_back(name);
  }

  std::string_view file_;
  const ShippedNames& shipped_;
  const IncludePolicy& policy_;
  std::string_view s_;
  const std::vector<int>& line_;
  std::size_t i_ = 0;
  bool stop_ = false;
  JailVerdict verdict_;
};

}  // namespace

bool is_clean_relative_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > 255 || name.front() == '/') return false;
  std::size_t seg_start = 0;
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '/') {
      const std::string_view seg = name.substr(seg_start, i - seg_start);
      if (seg.empty() || seg == "." || seg == "..") return false;
      seg_start = i + 1;
      continue;
    }
    const char c = name[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '+' || c == '-'))
      return false;
  }
  return true;
}

IncludePolicy IncludePolicy::toolkit(const std::string& include_dir) {
  IncludePolicy p;
  p.roots = {include_dir};
  std::error_code ec;
  if (std::filesystem::is_directory(std::filesystem::path(include_dir) / "cccl", ec))
    p.roots.push_back(include_dir + "/cccl");
  return p;
}

IncludePolicy IncludePolicy::cuda_defaults() { return toolkit(default_cuda_include_dir()); }

bool IncludePolicy::allows(std::string_view name) const {
  if (!is_clean_relative_name(name)) return false;
  if (std::find(headers.begin(), headers.end(), name) != headers.end()) return true;
  if (std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) {
        return !p.empty() && name.size() > p.size() && name.compare(0, p.size(), p) == 0;
      })) {
    return true;
  }
  // A clean relative name stays beneath the root; the OS confinement of the compile, not this
  // check, is what keeps a link inside the toolkit from reaching further.
  return std::any_of(roots.begin(), roots.end(), [&](const std::string& root) {
    std::error_code ec;
    return !root.empty() && std::filesystem::is_regular_file(std::filesystem::path(root) / name, ec);
  });
}

std::string include_advice(std::string_view name, const IncludePolicy& policy) {
  if (!is_clean_relative_name(name)) {
    return "outside the toolkit: include toolkit headers by their relative name (e.g. <cuda_fp16.h>) and ship "
           "your own headers with the task";
  }
  if (is_host_framework(name)) {
    return "host-only: torch and pybind11 code is not run here; submit device code only, the harness launches "
           "your kernel";
  }
  if (contains(k_runtime_headers, name)) return "remove it: NVRTC needs no runtime header";
  const std::string libcu = libcudacxx_counterpart(name, policy);
  if (!libcu.empty()) {
    return "not available to device code under NVRTC: use <" + libcu + "> (its names are in cuda::std)";
  }
  if (contains(k_standard_headers, name)) {
    return "host-only standard header: device code cannot use it; remove it (device code prints with printf and "
           "keeps its data in arrays, registers or shared memory)";
  }
  return "not in the toolkit: inline it or ship it as a header";
}

std::string format_refusals(std::span<const JailRefusal> refusals) {
  if (refusals.empty()) return {};
  constexpr std::size_t k_max_listed = 24;
  std::string out = "refused by the include jail: " + std::to_string(refusals.size()) +
                    (refusals.size() == 1 ? " problem" : " problems") + ", fix all of them:";
  for (std::size_t i = 0; i < refusals.size() && i < k_max_listed; ++i) {
    const JailRefusal& r = refusals[i];
    out += "\n" + (r.line > 0 ? r.file + "(" + std::to_string(r.line) + ")" : r.file) + ": " + r.what;
    if (!r.advice.empty()) out += ": " + r.advice;
  }
  if (refusals.size() > k_max_listed) out += "\n... and " + std::to_string(refusals.size() - k_max_listed) + " more";
  return out;
}

namespace {

JailVerdict scan_text(std::string_view text, std::string_view file_name, const ShippedNames& shipped,
                      const IncludePolicy& policy) {
  JailVerdict v;
  auto refuse_raw = [&](std::size_t pos, const std::string& what) {
    int line = 1;
    for (std::size_t k = 0; k < pos && k < text.size(); ++k) line += text[k] == '\n' ? 1 : 0;
    v.allowed = false;
    v.refusals.push_back({std::string(file_name), line, what, "remove it", {}});
    v.message = format_refusals(v.refusals);
    return v;
  };
  if (const std::size_t nul = text.find('\0'); nul != std::string_view::npos)
    return refuse_raw(nul, "NUL byte in source");
  for (std::string_view tri : {std::string_view("?\?="), std::string_view("?\?/")}) {
    if (const std::size_t t = text.find(tri); t != std::string_view::npos) {
      return refuse_raw(t, "trigraph '" + std::string(tri) + "'");
    }
  }
  const Spliced sp = splice(text);
  return Scanner(file_name, shipped, policy, sp.text, sp.line).run();
}

}  // namespace

JailVerdict scan_source(std::string_view text, std::string_view file_name, std::span<const Header> shipped,
                        const IncludePolicy& policy) {
  ShippedNames names;
  for (const Header& h : shipped) names.insert(h.name);
  return scan_text(text, file_name, names, policy);
}

JailVerdict check_job(const CompileJob& job, const IncludePolicy& policy) {
  ShippedNames names;
  for (const Header& h : job.headers) names.insert(h.name);
  JailVerdict all = scan_text(job.source, job.file_name, names, policy);
  // Header names come with the candidate too; a name NVRTC could read as a path, or a name given
  // twice (which copy would win is NVRTC's choice), is refused before anything else looks at it.
  constexpr std::string_view k_name_rule =
      "name it by a relative path of letters, digits and _ . + - / (no '..', no leading '/')";
  if (!is_clean_relative_name(job.file_name))
    all.refusals.push_back({"source", 0, "file name '" + job.file_name + "'", std::string(k_name_rule), {}});
  ShippedNames seen;
  for (const Header& h : job.headers) {
    if (!is_clean_relative_name(h.name)) {
      all.refusals.push_back(
          {"headers", 0, "shipped header name '" + h.name.substr(0, 80) + "'", std::string(k_name_rule), {}});
    } else if (!seen.insert(h.name).second) {
      all.refusals.push_back({h.name, 0, "shipped header '" + h.name + "' given twice", "ship each header once", {}});
    }
  }
  all.allowed = all.refusals.empty();
  for (const Header& h : job.headers) {
    if (!is_clean_relative_name(h.name)) continue;
    JailVerdict v = scan_text(h.content, h.name, names, policy);
    all.allowed = all.allowed && v.allowed;
    all.refusals.insert(all.refusals.end(), v.refusals.begin(), v.refusals.end());
    all.includes.insert(all.includes.end(), v.includes.begin(), v.includes.end());
  }
  all.message = format_refusals(all.refusals);
  if (!all.allowed) all.includes.clear();
  return all;
}

std::string scrub_paths(std::string_view text, std::span<const PathScrub> scrubs) {
  std::vector<const PathScrub*> order;
  for (const PathScrub& s : scrubs) {
    if (s.prefix.size() > 1) order.push_back(&s);
  }
  std::sort(order.begin(), order.end(),
            [](const PathScrub* a, const PathScrub* b) { return a->prefix.size() > b->prefix.size(); });
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    bool replaced = false;
    for (const PathScrub* s : order) {
      if (text.compare(i, s->prefix.size(), s->prefix) == 0) {
        out += s->placeholder;
        i += s->prefix.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out.push_back(text[i++]);
  }
  return out;
}

}  // namespace leap::sandbox

// SPDX-License-Identifier: Apache-2.0
// A small hand scanner, not a regular expression: the source is a candidate's, of any size and shape.
// It reads the source in one pass. Every search for a template's parts starts where the previous one
// stopped and the position never moves back (a `template` inside another one's parameter list or
// head is part of that one, not a template of its own), so each byte is read a bounded number of
// times whatever the text: K templates left in an `#if 0` cost K short reads, not K reads to the end.
// What it writes is bounded too: generated code is cut at k_max_code_text characters and quoted
// names at k_max_quoted_name, so a template's default argument used a thousand times cannot make the
// advice a thousand times the source.
#include "compile/kernel_diagnostics.hpp"

#include <time.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstddef>
#include <map>

#include "common/shortened.hpp"
#include "compile/compiler_exit.hpp"

namespace leap::sandbox {
namespace {

constexpr std::size_t npos = std::string_view::npos;
constexpr std::size_t k_max_code_text = 1024;   // an instantiation, a parameter list or a call in the advice
constexpr std::size_t k_max_quoted_name = 128;  // a template's name or a kernel's symbol quoted in the advice

bool ident_char(char c) noexcept { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool space(char c) noexcept { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// The source with comments and string/char literals blanked (newlines kept), so positions and line
// numbers stay those of the original.
std::string blank_comments_and_literals(std::string_view in) {
  std::string out(in);
  std::size_t i = 0;
  while (i < out.size()) {
    if (out[i] == '/' && i + 1 < out.size() && out[i + 1] == '/') {
      while (i < out.size() && out[i] != '\n') out[i++] = ' ';
    } else if (out[i] == '/' && i + 1 < out.size() && out[i + 1] == '*') {
      out[i++] = ' ';
      out[i++] = ' ';
      while (i < out.size() && !(out[i] == '*' && i + 1 < out.size() && out[i + 1] == '/')) {
        if (out[i] != '\n') out[i] = ' ';
        ++i;
      }
      for (int k = 0; k < 2 && i < out.size(); ++k) out[i++] = ' ';
    } else if (out[i] == '"' ||
               (out[i] == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(out[i - 1])) != 0))) {
      const char q = out[i];
      out[i++] = ' ';
      while (i < out.size() && out[i] != q && out[i] != '\n') {
        if (out[i] == '\\' && i + 1 < out.size()) out[i++] = ' ';
        out[i++] = ' ';
      }
      if (i < out.size() && out[i] == q) out[i++] = ' ';
    } else {
      ++i;
    }
  }
  return out;
}

// Generated code, cut once it passes k_max_code_text characters ("..." says where).
class CodeText {
 public:
  CodeText& operator<<(std::string_view s) {
    if (full_) return *this;
    const std::size_t room = k_max_code_text - text_.size();
    if (s.size() > room) {
      text_.append(s.substr(0, room)).append("...");
      full_ = true;
    } else {
      text_.append(s);
    }
    return *this;
  }
  CodeText& operator<<(char c) { return *this << std::string_view(&c, 1); }
  std::string str() && { return std::move(text_); }

 private:
  std::string text_;
  bool full_ = false;
};

// `s` with runs of blanks and newlines collapsed to one space and none at either end.
void append_trimmed(CodeText& out, std::string_view s) {
  bool pending_space = false, any = false;
  for (char c : s) {
    if (space(c)) {
      pending_space = any;
      continue;
    }
    if (pending_space) out << ' ';
    pending_space = false;
    any = true;
    out << c;
  }
}

std::string trimmed(std::string_view s) {
  CodeText out;
  append_trimmed(out, s);
  return std::move(out).str();
}

std::string_view strip(std::string_view s) {
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Splits at commas outside <>, (), [] and {}; one pass.
std::vector<std::string_view> split_top_level(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    const char c = i < s.size() ? s[i] : ',';
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    else if (c == '>' || c == ')' || c == ']' || c == '}') depth = std::max(0, depth - 1);
    else if (c == ',' && depth == 0) {
      parts.push_back(strip(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (parts.size() == 1 && parts[0].empty()) parts.clear();
  return parts;
}

std::string_view last_identifier(std::string_view s) {
  std::size_t e = s.size();
  while (e > 0 && !ident_char(s[e - 1])) --e;
  std::size_t b = e;
  while (b > 0 && ident_char(s[b - 1])) --b;
  return s.substr(b, e - b);
}

// `params` with every whole-word occurrence of a key of `with` replaced by its value, in one pass.
std::string substituted(std::string_view params, const std::map<std::string_view, std::string, std::less<>>& with) {
  CodeText out;
  std::string collapsed = trimmed(params);  // short already: trimmed() is cut at k_max_code_text
  const std::string_view p(collapsed);
  std::size_t i = 0;
  while (i < p.size()) {
    if (!ident_char(p[i])) {
      out << p[i++];
      continue;
    }
    const std::size_t b = i;
    while (i < p.size() && ident_char(p[i])) ++i;
    const std::string_view word = p.substr(b, i - b);
    const auto it = with.find(word);
    out << (it == with.end() ? word : std::string_view(it->second));
  }
  return std::move(out).str();
}

// A cursor over the blanked source that only moves forward: every scan below starts at `at` and
// leaves it where it stopped.
class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  std::size_t at = 0;

  // The next whole word `template` at or after `at`; npos when none is left.
  std::size_t next_template() {
    for (std::size_t g = s_.find("template", at); g != npos; g = s_.find("template", g + 1)) {
      const bool left = g == 0 || !ident_char(s_[g - 1]);
      const bool right = g + 8 >= s_.size() || !ident_char(s_[g + 8]);
      if (left && right) {
        at = g + 8;
        return g;
      }
    }
    at = s_.size();
    return npos;
  }
  void skip_space() {
    while (at < s_.size() && space(s_[at])) ++at;
  }
  // From the '<' at `at`, its matching '>'; npos when a '{' or ';' (or the end) comes first. `at`
  // ends after the '>' or at the character that stopped the scan.
  std::size_t matching_angle() {
    int depth = 0;
    for (; at < s_.size(); ++at) {
      const char c = s_[at];
      if (c == '<') {
        ++depth;
      } else if (c == '>' && --depth == 0) {
        return at++;
      } else if (c == '{' || c == ';') {
        return npos;
      }
    }
    return npos;
  }
  // From the '(' at `at`, its matching ')'; npos at the end. `at` ends after it.
  std::size_t matching_paren() {
    int depth = 0;
    for (; at < s_.size(); ++at) {
      if (s_[at] == '(') ++depth;
      else if (s_[at] == ')' && --depth == 0) return at++;
    }
    return npos;
  }
  // The next '(', ';' or '{' at or after `at` (left there); npos at the end.
  std::size_t next_stop() {
    at = std::min(s_.find_first_of("(;{", at), s_.size());
    return at < s_.size() ? at : npos;
  }

 private:
  std::string_view s_;
};

// 1-based line numbers of increasing positions, counted from where the last one left off.
class LineCounter {
 public:
  explicit LineCounter(std::string_view s) : s_(s) {}
  int line_of(std::size_t pos) {
    for (; counted_ < pos && counted_ < s_.size(); ++counted_) line_ += s_[counted_] == '\n' ? 1 : 0;
    return line_;
  }

 private:
  std::string_view s_;
  std::size_t counted_ = 0;
  int line_ = 1;
};

std::string join(std::span<const std::string> names, std::size_t max_names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < max_names; ++i)
    out += (i ? ", " : "") + detail::shortened(names[i], k_max_quoted_name, k_max_quoted_name - 3);
  if (names.size() > max_names) out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out;
}

std::string quoted_name(std::string_view name) {
  return detail::shortened(name, k_max_quoted_name, k_max_quoted_name - 3);
}

}  // namespace

std::vector<KernelTemplate> kernel_templates(std::string_view source) {
  const std::string blanked = blank_comments_and_literals(source);
  const std::string_view s(blanked);
  std::vector<KernelTemplate> found;
  Cursor cur(s);
  LineCounter lines(s);
  while (cur.next_template() != npos) {
    cur.skip_space();
    if (cur.at >= s.size() || s[cur.at] != '<') continue;  // an explicit instantiation or a use
    const std::size_t open = cur.at;
    const std::size_t close = cur.matching_angle();
    if (close == npos) continue;
    // The declaration head up to its parameter list: it must say __global__ and name the function.
    std::size_t params_open = cur.next_stop();
    if (params_open == npos || s[params_open] != '(') continue;
    // __launch_bounds__(...) sits between: skip over it to the real parameter list.
    std::size_t segment = close + 1;
    while (last_identifier(s.substr(segment, params_open - segment)) == "__launch_bounds__") {
      if (cur.matching_paren() == npos) break;
      segment = cur.at;
      params_open = cur.next_stop();
      if (params_open == npos || s[params_open] != '(') break;
    }
    if (params_open == npos || s[params_open] != '(') continue;
    const std::string_view head = s.substr(close + 1, params_open - close - 1);
    const std::size_t global = head.find("__global__");
    if (global == npos) continue;
    const std::size_t params_close = cur.matching_paren();
    if (params_close == npos) continue;

    KernelTemplate t;
    t.name = std::string(last_identifier(head));
    t.line = lines.line_of(close + 1 + global);
    std::vector<std::string> args;
    std::map<std::string_view, std::string, std::less<>> type_args;
    for (const std::string_view p : split_top_level(s.substr(open + 1, close - open - 1))) {
      const std::size_t eq = p.find('=');
      const std::string_view decl = strip(eq == npos ? p : p.substr(0, eq));
      const std::string_view pname = last_identifier(decl);
      const bool is_type = decl.starts_with("typename") || decl.starts_with("class");
      if (is_type) {
        args.push_back(eq == npos ? "float" : trimmed(p.substr(eq + 1)));
        type_args.insert_or_assign(pname, args.back());
      } else {
        args.push_back(eq == npos ? std::string(pname) : trimmed(p.substr(eq + 1)));
      }
    }
    const std::string_view raw_params = s.substr(params_open + 1, params_close - params_open - 1);
    t.parameters = substituted(raw_params, type_args);
    CodeText instantiation, call;
    instantiation << "template __global__ void " << t.name << "<";
    call << t.name << "<";
    for (std::size_t i = 0; i < args.size(); ++i) {
      instantiation << (i ? ", " : "") << args[i];
      call << (i ? ", " : "") << args[i];
    }
    instantiation << ">(" << t.parameters << ");";
    call << ">(";
    bool first = true;
    for (const std::string_view p : split_top_level(t.parameters)) {
      const std::size_t eq = p.find('=');
      call << (first ? "" : ", ") << last_identifier(eq == npos ? p : p.substr(0, eq));
      first = false;
    }
    call << ")";
    t.instantiation = std::move(instantiation).str();
    t.call = std::move(call).str();
    found.push_back(std::move(t));
  }
  return found;
}

std::string missing_kernel_advice(std::string_view source, std::string_view file_name,
                                  std::span<const std::string> kernels, std::string_view entry) {
  if (entry.empty() ? !kernels.empty() : std::find(kernels.begin(), kernels.end(), entry) != kernels.end()) return {};
  const std::vector<KernelTemplate> templates = kernel_templates(source);
  const std::string where = quoted_name(file_name);
  if (entry.empty()) {
    if (templates.empty()) {
      return "the module defines no kernel: " + where +
             " has no __global__ function; write one, e.g. extern \"C\" __global__ void my_kernel(float* x, int n)";
    }
    const KernelTemplate& t = templates.front();
    return "the module defines no kernel: the kernel template '" + quoted_name(t.name) + "' (" + where + " line " +
           std::to_string(t.line) +
           ") is never instantiated (its host launcher would have; host code is not compiled "
           "here); add an explicit instantiation with your template arguments, e.g.\n  " +
           t.instantiation;
  }
  const std::string want = quoted_name(entry);
  // A mangled entry with the wanted name: the kernel exists with C++ linkage.
  const std::string mangled_prefix = "_Z" + std::to_string(entry.size()) + std::string(entry);
  for (const std::string& k : kernels) {
    if (k.starts_with(mangled_prefix)) {
      return "the module defines the kernel '" + want + "' with C++ linkage (symbol " + quoted_name(k) +
             "), so the harness cannot find it by name: declare it extern \"C\" __global__ void " + want + "(...)";
    }
  }
  const auto t =
      std::find_if(templates.begin(), templates.end(), [&](const KernelTemplate& k) { return k.name == entry; });
  if (t != templates.end()) {
    return "the module defines no kernel named '" + want + "': '" + want + "' (" + where + " line " +
           std::to_string(t->line) +
           ") is a template, and a template has no extern \"C\" name; make it a __device__ function template and "
           "define extern \"C\" __global__ void " +
           want + "(...) that calls it with your template arguments";
  }
  std::string advice = "the module defines no kernel named '" + want + "'";
  if (!kernels.empty()) advice += " (it defines " + join(kernels, 6) + ")";
  advice += "; declare it as extern \"C\" __global__ void " + want + "(...)";
  if (!templates.empty()) {
    const KernelTemplate& k = templates.front();
    advice +=
        "; the kernel template '" + quoted_name(k.name) + "' (" + where + " line " + std::to_string(k.line) +
        ") is never instantiated (its host launcher would have; host code is not compiled here): make it a "
        "__device__ function template and call it from the entry with your template arguments, e.g.\n  extern \"C\" "
        "__global__ void " +
        want + "(" + k.parameters + ") { " + k.call + "; }";
  }
  return advice;
}

std::string missing_kernel_advice(CompileResult& result, std::string_view source, std::string_view file_name,
                                  std::string_view entry) {
  if (!result.ok() || !result.kernels) return {};
  const auto cpu0 = detail::cpu_of(CLOCK_THREAD_CPUTIME_ID);
  std::string advice = missing_kernel_advice(source, file_name, *result.kernels, entry);
  result.cpu_seconds += std::chrono::duration<double>(detail::cpu_of(CLOCK_THREAD_CPUTIME_ID) - cpu0).count();
  return advice;
}

}  // namespace leap::sandbox

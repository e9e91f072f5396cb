// SPDX-License-Identifier: Apache-2.0
// A small hand scanner, not a regular expression: the source is a candidate's, of any size and shape,
// and every loop here is bounded by its length.
#include "compile/kernel_diagnostics.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>

namespace leap::sandbox {
namespace {

bool ident_char(char c) noexcept { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

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

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])) != 0) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])) != 0) --e;
  std::string out;
  bool space = false;
  for (char c : s.substr(b, e - b)) {  // collapse runs of blanks and newlines
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

// Splits at commas outside <>, (), [] and {}.
std::vector<std::string> split_top_level(std::string_view s) {
  std::vector<std::string> parts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    const char c = i < s.size() ? s[i] : ',';
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    else if (c == '>' || c == ')' || c == ']' || c == '}') depth = std::max(0, depth - 1);
    else if (c == ',' && depth == 0) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  if (parts.size() == 1 && parts[0].empty()) parts.clear();
  return parts;
}

std::string last_identifier(std::string_view s) {
  std::size_t e = s.size();
  while (e > 0 && !ident_char(s[e - 1])) --e;
  std::size_t b = e;
  while (b > 0 && ident_char(s[b - 1])) --b;
  return std::string(s.substr(b, e - b));
}

std::string replace_word(std::string text, const std::string& word, const std::string& with) {
  if (word.empty()) return text;
  std::size_t pos = 0;
  while ((pos = text.find(word, pos)) != std::string::npos) {
    const bool left = pos == 0 || !ident_char(text[pos - 1]);
    const bool right = pos + word.size() >= text.size() || !ident_char(text[pos + word.size()]);
    if (left && right) {
      text.replace(pos, word.size(), with);
      pos += with.size();
    } else {
      pos += word.size();
    }
  }
  return text;
}

// From the '<' at `open`, the index of its matching '>' (or npos).
std::size_t matching_angle(std::string_view s, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    if (s[i] == '<') ++depth;
    else if (s[i] == '>' && --depth == 0) return i;
    else if (s[i] == '{' || s[i] == ';') return std::string_view::npos;
  }
  return std::string_view::npos;
}

std::size_t matching_paren(std::string_view s, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    else if (s[i] == ')' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

std::string join(std::span<const std::string> names, std::size_t max_names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < max_names; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > max_names) out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out;
}

}  // namespace

std::vector<KernelTemplate> kernel_templates(std::string_view source) {
  const std::string s = blank_comments_and_literals(source);
  std::vector<KernelTemplate> found;
  for (std::size_t g = s.find("template"); g != std::string::npos; g = s.find("template", g + 8)) {
    if ((g > 0 && ident_char(s[g - 1])) || (g + 8 < s.size() && ident_char(s[g + 8]))) continue;
    std::size_t open = g + 8;
    while (open < s.size() && std::isspace(static_cast<unsigned char>(s[open])) != 0) ++open;
    if (open >= s.size() || s[open] != '<') continue;  // an explicit instantiation or a use
    const std::size_t close = matching_angle(s, open);
    if (close == std::string::npos) continue;
    // The declaration head up to its parameter list: it must say __global__ and name the function.
    const std::size_t paren = s.find('(', close);
    const std::size_t stop = s.find_first_of(";{", close);
    if (paren == std::string::npos || (stop != std::string::npos && stop < paren)) continue;
    std::string_view head = std::string_view(s).substr(close + 1, paren - close - 1);
    // __launch_bounds__(...) sits between: skip over it to the real parameter list.
    std::size_t params_open = paren;
    while (true) {
      const std::string name = last_identifier(head);
      if (name != "__launch_bounds__") break;
      const std::size_t lb_close = matching_paren(s, params_open);
      if (lb_close == std::string::npos) break;
      params_open = s.find('(', lb_close);
      if (params_open == std::string::npos) break;
      head = std::string_view(s).substr(close + 1, params_open - close - 1);
    }
    if (params_open == std::string::npos || head.find("__global__") == std::string_view::npos) continue;
    const std::size_t params_close = matching_paren(s, params_open);
    if (params_close == std::string::npos) continue;

    KernelTemplate t;
    t.name = last_identifier(head);
    const std::size_t at = close + 1 + head.find("__global__");
    t.line = 1 + static_cast<int>(std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    std::vector<std::string> args;
    std::string params = trim(std::string_view(s).substr(params_open + 1, params_close - params_open - 1));
    for (const std::string& p : split_top_level(std::string_view(s).substr(open + 1, close - open - 1))) {
      const std::size_t eq = p.find('=');
      const std::string decl = trim(eq == std::string::npos ? std::string_view(p) : std::string_view(p).substr(0, eq));
      const std::string pname = last_identifier(decl);
      const bool is_type = decl.starts_with("typename") || decl.starts_with("class");
      if (is_type) {
        args.push_back(eq == std::string::npos ? "float" : trim(std::string_view(p).substr(eq + 1)));
        params = replace_word(params, pname, args.back());
      } else {
        args.push_back(eq == std::string::npos ? pname : trim(std::string_view(p).substr(eq + 1)));
      }
    }
    t.instantiation = "template __global__ void " + t.name + "<" + join(args, args.size()) + ">(" + params + ");";
    t.parameters = params;
    std::vector<std::string> names;
    for (const std::string& p : split_top_level(params)) {
      const std::size_t eq = p.find('=');
      names.push_back(
          last_identifier(eq == std::string::npos ? std::string_view(p) : std::string_view(p).substr(0, eq)));
    }
    t.call = t.name + "<" + join(args, args.size()) + ">(" + join(names, names.size()) + ")";
    found.push_back(std::move(t));
  }
  return found;
}

std::string missing_kernel_advice(std::string_view source, std::string_view file_name,
                                  std::span<const std::string> kernels, std::string_view entry) {
  if (entry.empty() ? !kernels.empty() : std::find(kernels.begin(), kernels.end(), entry) != kernels.end()) return {};
  const std::vector<KernelTemplate> templates = kernel_templates(source);
  const std::string where = std::string(file_name);
  if (entry.empty()) {
    if (templates.empty()) {
      return "the module defines no kernel: " + where +
             " has no __global__ function; write one, e.g. extern \"C\" __global__ void my_kernel(float* x, int n)";
    }
    const KernelTemplate& t = templates.front();
    return "the module defines no kernel: the kernel template '" + t.name + "' (" + where + " line " +
           std::to_string(t.line) +
           ") is never instantiated (its host launcher would have; host code is not compiled "
           "here); add an explicit instantiation with your template arguments, e.g.\n  " +
           t.instantiation;
  }
  const std::string want = std::string(entry);
  // A mangled entry with the wanted name: the kernel exists with C++ linkage.
  const std::string mangled_prefix = "_Z" + std::to_string(want.size()) + want;
  for (const std::string& k : kernels) {
    if (k.starts_with(mangled_prefix)) {
      return "the module defines the kernel '" + want + "' with C++ linkage (symbol " + k +
             "), so the harness cannot find it by name: declare it extern \"C\" __global__ void " + want + "(...)";
    }
  }
  const auto t =
      std::find_if(templates.begin(), templates.end(), [&](const KernelTemplate& k) { return k.name == want; });
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
        "; the kernel template '" + k.name + "' (" + where + " line " + std::to_string(k.line) +
        ") is never instantiated (its host launcher would have; host code is not compiled here): make it a "
        "__device__ function template and call it from the entry with your template arguments, e.g.\n  extern \"C\" "
        "__global__ void " +
        want + "(" + k.parameters + ") { " + k.call + "; }";
  }
  return advice;
}

}  // namespace leap::sandbox

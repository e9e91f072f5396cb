// SPDX-License-Identifier: Apache-2.0
#include "source_rewrite.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <optional>

namespace leap::cpu_runtime::detail {
namespace {

constexpr std::string_view k_global = "__leap_cpu_global__";
constexpr std::string_view k_shared = "__leap_cpu_shared__";

enum class Kind { identifier, number, literal, punct };

struct Token {
  Kind kind;
  std::size_t begin, end;  // in the text
  std::size_t line;        // in the original file, from the line markers
  std::size_t file;        // index into the file names seen in line markers
};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '$'; }

class Lexer {
 public:
  explicit Lexer(std::string_view text) : t_(text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    bool line_start = true;
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '\n') {
        ++i_;
        ++line_;
        line_start = true;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++i_;
        continue;
      }
      if (line_start && c == '#') {
        directive();
        continue;
      }
      line_start = false;
      const std::size_t b = i_;
      if (ident_start(c)) {
        while (i_ < t_.size() && ident_char(t_[i_])) ++i_;
        const std::string_view word = t_.substr(b, i_ - b);
        if (i_ < t_.size() && (t_[i_] == '"' || t_[i_] == '\'') &&
            (word == "u8" || word == "u" || word == "U" || word == "L" || word == "R" || word == "u8R" ||
             word == "uR" || word == "UR" || word == "LR")) {
          literal(word.back() == 'R');
          out.push_back({Kind::literal, b, i_, line_, file_});
          continue;
        }
        out.push_back({Kind::identifier, b, i_, line_, file_});
      } else if (std::isdigit(static_cast<unsigned char>(c)) != 0 ||
                 (c == '.' && i_ + 1 < t_.size() && std::isdigit(static_cast<unsigned char>(t_[i_ + 1])) != 0)) {
        ++i_;
        while (i_ < t_.size()) {
          const char d = t_[i_];
          if ((d == '+' || d == '-') &&
              (t_[i_ - 1] == 'e' || t_[i_ - 1] == 'E' || t_[i_ - 1] == 'p' || t_[i_ - 1] == 'P')) {
            ++i_;
          } else if (ident_char(d) || d == '.' || d == '\'') {
            ++i_;
          } else {
            break;
          }
        }
        out.push_back({Kind::number, b, i_, line_, file_});
      } else if (c == '"' || c == '\'') {
        literal(false);
        out.push_back({Kind::literal, b, i_, line_, file_});
      } else {
        const std::string_view two = t_.substr(i_, 2);
        i_ += (two == "::" || two == "->" || two == ">=" || two == "<=" || two == ">>" || two == "<<") ? 2u : 1u;
        out.push_back({Kind::punct, b, i_, line_, file_});
      }
    }
    return out;
  }

  std::vector<std::string> files;

 private:
  // A line marker (# 12 "file" flags) sets the line and file; any other directive (#pragma) is skipped.
  void directive() {
    std::size_t e = t_.find('\n', i_);
    if (e == std::string_view::npos) e = t_.size();
    std::string_view d = t_.substr(i_ + 1, e - i_ - 1);
    const std::size_t p = d.find_first_not_of(" \t");
    if (p != std::string_view::npos && std::isdigit(static_cast<unsigned char>(d[p])) != 0) {
      std::size_t q = p;
      std::size_t number = 0;
      while (q < d.size() && std::isdigit(static_cast<unsigned char>(d[q])) != 0)
        number = number * 10 + static_cast<std::size_t>(d[q++] - '0');
      const std::size_t open = d.find('"', q);
      const std::size_t close = open == std::string_view::npos ? open : d.find('"', open + 1);
      if (close != std::string_view::npos) {
        const std::string name(d.substr(open + 1, close - open - 1));
        auto it = std::find(files.begin(), files.end(), name);
        file_ = static_cast<std::size_t>(it - files.begin());
        if (it == files.end()) files.push_back(name);
      }
      line_ = number - 1;  // the newline ending the marker moves to `number`
    }
    i_ = e;
  }

  void literal(bool raw) {
    const char quote = t_[i_];
    if (raw && quote == '"') {
      const std::size_t paren = t_.find('(', i_);
      const std::string delim = ")" + std::string(t_.substr(i_ + 1, paren - i_ - 1)) + "\"";
      const std::size_t end = t_.find(delim, paren);
      for (std::size_t k = i_; k < std::min(end, t_.size()); ++k)
        if (t_[k] == '\n') ++line_;
      i_ = end == std::string_view::npos ? t_.size() : end + delim.size();
      return;
    }
    ++i_;
    while (i_ < t_.size() && t_[i_] != quote && t_[i_] != '\n') i_ += t_[i_] == '\\' ? 2u : 1u;
    if (i_ < t_.size() && t_[i_] == quote) ++i_;
  }

  std::string_view t_;
  std::size_t i_ = 0;
  std::size_t line_ = 1;
  std::size_t file_ = 0;
};

enum class Scope { global_ns, named_ns, anonymous_ns, linkage, other };

struct ScopeEntry {
  Scope kind;
  std::string name;  // a named namespace's name (a::b for nested ones)
};

struct Edit {
  std::size_t begin, end;
  std::string text;
};

class Rewriter {
 public:
  explicit Rewriter(std::string_view text) : t_(text), lexer_(text) { tokens_ = lexer_.run(); }

  RewriteResult run() {
    RewriteResult r;
    std::vector<ScopeEntry> scopes;
    std::size_t statement = 0;  // index of the first token of the current statement
    for (std::size_t k = 0; k < tokens_.size(); ++k) {
      const std::string_view s = text(k);
      if (tokens_[k].kind == Kind::punct && (s == ";" || s == "}")) {
        if (s == "}" && !scopes.empty()) scopes.pop_back();
        statement = k + 1;
        continue;
      }
      if (tokens_[k].kind == Kind::punct && s == "{") {
        scopes.push_back(scope_opened(statement, k));
        statement = k + 1;
        continue;
      }
      if (tokens_[k].kind != Kind::identifier) continue;
      if (s == k_global) {
        edits_.push_back({tokens_[k].begin, tokens_[k].end, ""});
        if (const auto name = kernel_name(scopes, statement, k)) {
          if (std::find(r.kernels.begin(), r.kernels.end(), *name) == r.kernels.end()) r.kernels.push_back(*name);
        }
      } else if (s == k_shared) {
        std::string error;
        const std::size_t end = rewrite_shared(scopes, statement, k, error);
        if (!error.empty()) {
          r.error = error;
          return r;
        }
        k = end;
        statement = end + 1;
      }
    }
    r.text = apply() + footer(r.kernels);
    r.ok = true;
    return r;
  }

 private:
  std::string_view text(std::size_t k) const { return t_.substr(tokens_[k].begin, tokens_[k].end - tokens_[k].begin); }
  bool is(std::size_t k, std::string_view s) const { return k < tokens_.size() && text(k) == s; }

  std::string where(std::size_t k) const {
    const Token& tok = tokens_[k];
    const std::string file = tok.file < lexer_.files.size() ? lexer_.files[tok.file] : "<source>";
    return file + ":" + std::to_string(tok.line);
  }

  ScopeEntry scope_opened(std::size_t statement, std::size_t brace) const {
    std::size_t k = statement;
    if (is(k, "inline")) ++k;
    if (is(k, "namespace")) {
      std::string name;
      for (++k; k < brace; ++k) name += std::string(text(k));
      return name.empty() ? ScopeEntry{Scope::anonymous_ns, ""} : ScopeEntry{Scope::named_ns, name};
    }
    if (is(statement, "extern") && statement + 2 == brace && tokens_[statement + 1].kind == Kind::literal)
      return {Scope::linkage, ""};
    return {Scope::other, ""};
  }

  // The kernel's qualified name, or nothing when it cannot be listed (a template, or not at
  // namespace scope).
  std::optional<std::string> kernel_name(const std::vector<ScopeEntry>& scopes, std::size_t statement,
                                         std::size_t marker) const {
    std::string prefix;
    for (const ScopeEntry& s : scopes) {
      if (s.kind == Scope::other) return std::nullopt;
      if (s.kind == Scope::named_ns) prefix += s.name + "::";
    }
    for (std::size_t k = statement; k < marker; ++k)
      if (is(k, "template")) return std::nullopt;
    for (std::size_t k = marker + 1; k < tokens_.size(); ++k) {
      const std::string_view s = text(k);
      if (s == "__attribute__" || s == "__declspec" || s == "alignas") {
        k = skip_group(k + 1);
        continue;
      }
      if (s == ";" || s == "{") return std::nullopt;
      if (tokens_[k].kind == Kind::identifier && is(k + 1, "(")) return prefix + std::string(s);
    }
    return std::nullopt;
  }

  // The index of the ")" closing the group that opens at `open` (or `open` itself when it is not "(").
  std::size_t skip_group(std::size_t open) const {
    if (!is(open, "(")) return open - 1;
    int depth = 0;
    for (std::size_t k = open; k < tokens_.size(); ++k) {
      if (is(k, "(")) ++depth;
      if (is(k, ")") && --depth == 0) return k;
    }
    return tokens_.size() - 1;
  }

  // Rewrites the declaration holding the marker at `marker`; returns the index of its ";".
  std::size_t rewrite_shared(const std::vector<ScopeEntry>& scopes, std::size_t statement, std::size_t marker,
                             std::string& error) {
    if (scopes.empty() || scopes.back().kind != Scope::other) {
      error = where(marker) +
              ": a __shared__ variable at namespace scope: the CPU runtime needs it declared inside the kernel or "
              "device function that uses it";
      return marker;
    }
    // The statement may start after a label (case 1:, name:).
    std::size_t begin = statement;
    for (std::size_t k = statement; k < marker; ++k)
      if (is(k, ":")) begin = k + 1;
    int depth = 0;
    std::size_t end = marker;
    for (; end < tokens_.size(); ++end) {
      const std::string_view s = text(end);
      if (depth == 0 && s == ";") break;
      if (depth == 0 && (s == "=" || s == "{")) {
        error = where(marker) + ": a __shared__ variable with an initialiser (CUDA does not allow one)";
        return marker;
      }
      if (s == "(" || s == "[" || s == "{") ++depth;
      if (s == ")" || s == "]" || s == "}") --depth;
    }
    if (end == tokens_.size()) {
      error = where(marker) + ": a __shared__ declaration without its ';'";
      return marker;
    }
    bool dynamic = false;
    std::vector<std::size_t> kept;  // the declaration's tokens, storage class and marker left out
    for (std::size_t k = begin; k < end; ++k) {
      const std::string_view s = text(k);
      if (s == "extern") {
        dynamic = true;
      } else if (s != "static" && s != k_shared) {
        kept.push_back(k);
      }
    }
    // Declarator names: identifiers at depth 0 (angle brackets count) followed by '[', ',' or the end.
    std::vector<std::size_t> names;
    int nest = 0, angle = 0;  // angle brackets count outside parentheses and brackets only
    for (std::size_t j = 0; j < kept.size(); ++j) {
      const std::string_view s = text(kept[j]);
      if (s == "(" || s == "[" || s == "{") ++nest;
      if (s == ")" || s == "]" || s == "}") --nest;
      if (nest == 0 && s == "<") ++angle;
      if (nest == 0 && s == ">") --angle;
      if (nest == 0 && s == ">>") angle -= 2;
      if (nest != 0 || angle != 0 || tokens_[kept[j]].kind != Kind::identifier || s == "__attribute__") continue;
      const std::string_view after = j + 1 < kept.size() ? text(kept[j + 1]) : ";";
      if (after == "[" || after == "," || after == ";" || after == "__attribute__") names.push_back(kept[j]);
    }
    if (names.empty()) {
      error = where(marker) + ": cannot read the name in this __shared__ declaration";
      return end;
    }
    const std::string id = std::to_string(++counter_);
    std::string out = "typedef";
    for (std::size_t k : kept) {
      out += ' ';
      out += std::find(names.begin(), names.end(), k) != names.end() ? type_name(text(k), id) : std::string(text(k));
    }
    out += ";";
    for (std::size_t k : names) {
      const std::string name(text(k));
      const std::string type = type_name(name, id);
      if (dynamic) {
        out += " " + type + "& " + name + " = ::leap_cpu::detail::dynamic_shared<" + type + ">();";
      } else {
        const std::string slot = "leap_cpu_slot_" + name + "_" + id;
        out += " static const ::leap_cpu::detail::SharedSlot " + slot + "(sizeof(" + type + "), alignof(" + type +
               ")); " + type + "& " + name + " = " + slot + ".get<" + type + ">();";
      }
    }
    // Keep the lines: the replaced span's newlines follow the replacement.
    const std::size_t from = tokens_[begin].begin, to = tokens_[end].end;
    out += std::string(static_cast<std::size_t>(std::count(t_.begin() + static_cast<std::ptrdiff_t>(from),
                                                           t_.begin() + static_cast<std::ptrdiff_t>(to), '\n')),
                       '\n');
    edits_.push_back({from, to, out});
    return end;
  }

  static std::string type_name(std::string_view name, const std::string& id) {
    return "leap_cpu_shared_" + std::string(name) + "_" + id;
  }

  std::string apply() {
    std::sort(edits_.begin(), edits_.end(), [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    std::string out;
    out.reserve(t_.size() + 1024);
    std::size_t at = 0;
    for (const Edit& e : edits_) {
      out.append(t_.substr(at, e.begin - at));
      out += e.text;
      at = e.end;
    }
    out.append(t_.substr(at));
    return out;
  }

  static std::string footer(const std::vector<std::string>& kernels) {
    std::string f = "\n# 1 \"<leap_cpu module table>\"\n";
    if (!kernels.empty()) {
      f += "static const ::leap_cpu::abi::Kernel leap_cpu_module_kernels[] = {\n";
      for (const std::string& k : kernels) f += "  ::leap_cpu::detail::kernel_entry<&::" + k + ">(\"" + k + "\"),\n";
      f += "};\n";
    }
    f += "extern \"C\" __attribute__((visibility(\"default\"))) const ::leap_cpu::abi::ModuleTable* "
         "leap_cpu_module_attach(const ::leap_cpu::abi::Hooks* hooks) {\n  return ::leap_cpu::detail::attach(hooks, ";
    f += kernels.empty() ? "nullptr, 0" : "leap_cpu_module_kernels, " + std::to_string(kernels.size());
    f += ");\n}\n";
    return f;
  }

  std::string_view t_;
  Lexer lexer_;
  std::vector<Token> tokens_;
  std::vector<Edit> edits_;
  int counter_ = 0;
};

}  // namespace

RewriteResult rewrite_module_source(std::string_view preprocessed) { return Rewriter(preprocessed).run(); }

}  // namespace leap::cpu_runtime::detail

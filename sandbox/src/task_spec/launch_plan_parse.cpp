// SPDX-License-Identifier: Apache-2.0
// A launch plan read from a candidate's source: its `// leap-launch:` and `// leap-scratch:` lines,
// each one a size-limited directive read by a parser that never throws past parse_launch_plan; and a
// plan written back as those lines. What a plan may do is checked in launch_plan_check.cpp.
#include "leap/sandbox/launch_plan.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/identifier.hpp"
#include "task_spec/launch_plan_text.hpp"

namespace leap::sandbox {
namespace {

using namespace detail::launch_plan_text;

constexpr std::string_view k_rules =
    "write `// leap-launch: KERNEL grid=DIMS block=DIMS [shared=BYTES] [args=(NAME, ...)]` or `// leap-scratch: NAME "
    "DTYPE COUNT`";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Splits `text` at commas outside parentheses; false when the parentheses do not balance.
bool split_top_level(std::string_view text, std::vector<std::string_view>& parts) {
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    else if (text[i] == ')' && --depth < 0) return false;
    else if (text[i] == ',' && depth == 0) {
      parts.push_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  parts.push_back(trim(text.substr(start)));
  return depth == 0;
}

// "(a, b)" -> "a, b" when the first '(' closes at the very end; else nullopt.
std::optional<std::string_view> parenthesised(std::string_view v) {
  if (v.size() < 2 || v.front() != '(' || v.back() != ')') return std::nullopt;
  int depth = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '(') ++depth;
    else if (v[i] == ')' && --depth == 0 && i + 1 != v.size()) return std::nullopt;
  }
  return v.substr(1, v.size() - 2);
}

class DirectiveParser {
 public:
  DirectiveParser(int line, std::string_view body) : line_(line), body_(body) {}

  KernelLaunchDecl launch() {
    KernelLaunchDecl k;
    k.line = line_;
    std::size_t pos = 0;
    const std::string_view name = word(pos);
    if (name.empty())
      fail("a kernel name comes first, e.g. `// leap-launch: my_kernel grid=ceil_div(n, 256) block=256`");
    if (!detail::is_identifier(name, k_max_plan_name_length))
      fail("kernel name " + shown_text(name) + " is not an identifier (declare the kernel extern \"C\" __global__)");
    k.kernel = std::string(name);
    std::set<std::string, std::less<>> seen;
    for (;;) {
      while (pos < body_.size() && is_space(body_[pos])) ++pos;
      if (pos >= body_.size()) break;
      const std::size_t key_start = pos;
      while (pos < body_.size() && std::isalpha(static_cast<unsigned char>(body_[pos])) != 0) ++pos;
      const std::string_view key = body_.substr(key_start, pos - key_start);
      while (pos < body_.size() && is_space(body_[pos])) ++pos;  // "block = 256" reads as block=256
      if (key.empty() || pos >= body_.size() || body_[pos] != '=') {
        fail("expected KEY=VALUE (grid, block, shared or args) at " + shown_text(body_.substr(key_start, 20)));
      }
      ++pos;
      if (key != "grid" && key != "block" && key != "shared" && key != "args") {
        fail("unknown key " + shown_text(key) + " (grid, block, shared or args)");
      }
      if (!seen.insert(std::string(key)).second) fail(std::string(key) + "= given twice");
      const std::string_view value = value_at(pos, key);
      if (key == "grid" || key == "block") dims(value, key, key == "grid" ? k.grid : k.block);
      else if (key == "args") k.args = names(value);
      else {
        expression_text(value, "shared=");
        k.shared_bytes = std::string(value);
      }
    }
    if (seen.count("grid") == 0) fail("grid= is missing (e.g. grid=ceil_div(n, 256))");
    if (seen.count("block") == 0) fail("block= is missing (e.g. block=256)");
    return k;
  }

  ScratchDecl scratch() {
    ScratchDecl s;
    s.line = line_;
    std::size_t pos = 0;
    const std::string_view name = word(pos);
    const std::string_view dtype = word(pos);
    const std::string_view count = trim(body_.substr(std::min(pos, body_.size())));
    if (name.empty() || dtype.empty() || count.empty())
      fail("expected `// leap-scratch: NAME DTYPE COUNT`, e.g. `// leap-scratch: partials float32 ceil_div(n, 256)`");
    if (!detail::is_identifier(name, k_max_plan_name_length))
      fail("scratch name " + shown_text(name) + " is not an identifier");
    const std::optional<DType> d = dtype_from_string(dtype);
    if (!d) fail("unknown dtype " + shown_text(dtype) + " (float32, float16, bfloat16, int32 or int8)");
    expression_text(count, "COUNT");
    s.name = std::string(name);
    s.dtype = *d;
    s.count = std::string(count);
    return s;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw LaunchPlanError("line " + std::to_string(line_) + ": " + why);
  }

  std::string_view word(std::size_t& pos) const {
    while (pos < body_.size() && is_space(body_[pos])) ++pos;
    const std::size_t start = pos;
    while (pos < body_.size() && !is_space(body_[pos])) ++pos;
    return body_.substr(start, pos - start);
  }

  // A value runs to the next `KEY=` (or `KEY =`) that follows white space outside parentheses, or to
  // the end. Size expressions hold no '=', so a word before one is always the next key.
  std::string_view value_at(std::size_t& pos, std::string_view key) const {
    const std::size_t start = pos;
    int depth = 0;
    std::size_t end = body_.size();
    for (std::size_t i = pos; i < body_.size(); ++i) {
      const char c = body_[i];
      if (c == '(') ++depth;
      else if (c == ')') --depth;
      if (depth < 0) fail(std::string(key) + "=: a ')' without its '('");
      if (depth == 0 && is_space(c)) {
        std::size_t j = i;
        while (j < body_.size() && is_space(body_[j])) ++j;
        std::size_t k = j;
        while (k < body_.size() && std::isalpha(static_cast<unsigned char>(body_[k])) != 0) ++k;
        const std::size_t word_end = k;
        while (k < body_.size() && is_space(body_[k])) ++k;
        if (word_end > j && k < body_.size() && body_[k] == '=') {
          end = i;
          break;
        }
      }
    }
    if (depth != 0) fail(std::string(key) + "=: a '(' without its ')'");
    pos = end;
    const std::string_view v = trim(body_.substr(start, end - start));
    if (v.empty()) fail(std::string(key) + "= has no value");
    return v;
  }

  // Only what size expressions are written with: a stray byte is named here, not deep in an
  // expression later, and the plan's canonical text reads back as itself.
  void expression_text(std::string_view value, std::string_view field) const {
    for (const char c : value) {
      const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 || is_space(c) || c == '_' || c == '(' ||
                      c == ')' || c == ',' || c == '+' || c == '-' || c == '*' || c == '/' || c == '%';
      if (!ok) {
        const std::string shown = static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f
                                      ? std::string("'") + c + "'"
                                      : "byte " + std::to_string(static_cast<unsigned char>(c));
        fail(std::string(field) + ": " + shown +
             " has no place in a size expression (names, integers, + - * / %, "
             "parentheses and ceil_div, min, max, pow2_ceil)");
      }
    }
  }

  // (x, y, z), or x, y, z without the parentheses.
  void dims(std::string_view value, std::string_view key, std::string (&out)[3]) const {
    expression_text(value, std::string(key) + "=");
    std::vector<std::string_view> parts;
    split_top_level(parenthesised(value).value_or(value), parts);
    if (parts.size() > 3) fail(std::string(key) + "=" + shown_text(value) + ": more than 3 dimensions");
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (parts[i].empty())
        fail(std::string(key) + "=" + shown_text(value) + ": dimension " + std::to_string(i + 1) + " is empty");
      out[i] = std::string(parts[i]);
    }
  }

  std::vector<std::string> names(std::string_view value) const {
    std::vector<std::string> out;
    const std::optional<std::string_view> inner = parenthesised(value);
    const std::string_view list = inner ? trim(*inner) : value;
    if (list.empty()) return out;  // args=(): a kernel without parameters
    std::vector<std::string_view> parts;
    split_top_level(list, parts);
    for (const std::string_view n : parts) {
      if (!detail::is_identifier(n, k_max_plan_name_length))
        fail("args: " + shown_text(n) + " is not a name (a task parameter or a scratch buffer)");
      out.emplace_back(n);
    }
    return out;
  }

  int line_;
  std::string_view body_;
};

}  // namespace

std::string_view to_string(PlanStatus status) noexcept {
  switch (status) {
    case PlanStatus::ok: return "ok";
    case PlanStatus::invalid: return "invalid";
    case PlanStatus::refused: return "refused";
  }
  return "unknown";
}

PlanParse parse_launch_plan(std::string_view source) {
  PlanParse out;
  try {
    int line_no = 0;
    std::size_t pos = 0;
    while (pos < source.size()) {
      std::size_t end = source.find('\n', pos);
      if (end == std::string_view::npos) end = source.size();
      const std::string_view line = trim(source.substr(pos, end - pos));
      pos = end + 1;
      ++line_no;
      if (!line.starts_with("//")) continue;
      const std::string_view comment = trim(line.substr(2));
      if (!comment.starts_with("leap-")) continue;
      // A directive's name: leap-WORD followed by ':'. Other text after "leap-" is prose.
      std::size_t w = 5;
      while (w < comment.size() &&
             (std::isalpha(static_cast<unsigned char>(comment[w])) != 0 || comment[w] == '-' || comment[w] == '_'))
        ++w;
      if (w >= comment.size() || comment[w] != ':') continue;
      const std::string_view directive = comment.substr(0, w);
      if (line.size() > k_max_plan_line_length) {
        throw LaunchPlanError("line " + std::to_string(line_no) + ": a " + std::string(directive) + " line of " +
                              std::to_string(line.size()) + " characters, over the limit of " +
                              std::to_string(k_max_plan_line_length));
      }
      DirectiveParser p(line_no, comment.substr(w + 1));
      if (directive == "leap-launch") {
        if (out.plan.kernels.size() >= static_cast<std::size_t>(k_max_plan_kernels)) {
          throw LaunchPlanError("line " + std::to_string(line_no) + ": more than " +
                                std::to_string(k_max_plan_kernels) + " leap-launch lines");
        }
        out.plan.kernels.push_back(p.launch());
      } else if (directive == "leap-scratch") {
        if (out.plan.scratch.size() >= static_cast<std::size_t>(k_max_plan_scratch)) {
          throw LaunchPlanError("line " + std::to_string(line_no) + ": more than " +
                                std::to_string(k_max_plan_scratch) + " leap-scratch lines");
        }
        out.plan.scratch.push_back(p.scratch());
      } else {
        throw LaunchPlanError("line " + std::to_string(line_no) + ": unknown directive " + shown_text(directive) +
                              ": " + std::string(k_rules));
      }
    }
    if (out.plan.kernels.empty() && !out.plan.scratch.empty()) {
      throw LaunchPlanError("line " + std::to_string(out.plan.scratch.front().line) +
                            ": leap-scratch without any leap-launch line (scratch is passed to kernels through args=)");
    }
  } catch (const LaunchPlanError& e) {
    out.plan = {};
    out.error = e.what();
  } catch (const std::exception& e) {  // memory exhausted: still a result
    out.plan = {};
    out.error = std::string("the launch plan could not be read: ") + e.what();
  }
  return out;
}

std::string to_directives(const LaunchPlan& plan) {
  std::vector<std::pair<int, std::string>> lines;
  for (const ScratchDecl& s : plan.scratch)
    lines.emplace_back(s.line, "// leap-scratch: " + s.name + " " + std::string(to_string(s.dtype)) + " " + s.count);
  for (const KernelLaunchDecl& k : plan.kernels) {
    std::string line = "// leap-launch: " + k.kernel + " grid=" + join(k.grid) + " block=" + join(k.block);
    if (k.shared_bytes != "0") line += " shared=" + k.shared_bytes;
    if (k.args) {
      line += " args=(";
      for (std::size_t i = 0; i < k.args->size(); ++i) line += (i > 0 ? ", " : "") + (*k.args)[i];
      line += ")";
    }
    lines.emplace_back(k.line, std::move(line));
  }
  // Each directive on its own line number again (blank lines between), so messages about the text
  // name the lines of the source it came from.
  std::stable_sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  int at = 1;
  for (const auto& [line, text] : lines) {
    for (; at < line; ++at) out += "\n";
    out += text + "\n";
    ++at;
  }
  return out;
}

LaunchPlan task_launch_plan(const TaskSpec& task) {
  LaunchPlan p;
  KernelLaunchDecl k;
  k.kernel = task.entry;
  for (int i = 0; i < 3; ++i) {
    k.grid[i] = task.launch.grid[i];
    k.block[i] = task.launch.block[i];
  }
  k.shared_bytes = task.launch.shared_bytes;
  p.kernels.push_back(std::move(k));
  return p;
}

}  // namespace leap::sandbox

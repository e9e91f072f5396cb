// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/launch_plan.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/identifier.hpp"
#include "common/shortened.hpp"
#include "evaluation/size_expr.hpp"

namespace leap::sandbox {
namespace {

constexpr std::string_view k_rules =
    "write `// leap-launch: KERNEL grid=DIMS block=DIMS [shared=BYTES] [args=(NAME, ...)]` or `// leap-scratch: NAME DTYPE COUNT`";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// A kernel or scratch name of a plan: well past any name a kernel is given, and short enough that a
// message quoting it stays one line.
constexpr std::size_t k_max_plan_name_length = 255;

// Candidate text quoted in a message: its start, with control and non-ASCII bytes as '?'.
std::string shown_text(std::string_view s) {
  std::string out = detail::shortened(s, 80, 60);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  }
  return "\"" + out + "\"";
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
    if (name.empty()) fail("a kernel name comes first, e.g. `// leap-launch: my_kernel grid=ceil_div(n, 256) block=256`");
    if (!detail::is_identifier(name, k_max_plan_name_length)) fail("kernel name " + shown_text(name) + " is not an identifier (declare the kernel extern \"C\" __global__)");
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
    if (name.empty() || dtype.empty() || count.empty()) fail("expected `// leap-scratch: NAME DTYPE COUNT`, e.g. `// leap-scratch: partials float32 ceil_div(n, 256)`");
    if (!detail::is_identifier(name, k_max_plan_name_length)) fail("scratch name " + shown_text(name) + " is not an identifier");
    const std::optional<DType> d = dtype_from_string(dtype);
    if (!d) fail("unknown dtype " + shown_text(dtype) + " (float32, float16, bfloat16 or int32)");
    expression_text(count, "COUNT");
    s.name = std::string(name);
    s.dtype = *d;
    s.count = std::string(count);
    return s;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw LaunchPlanError("line " + std::to_string(line_) + ": " + why); }

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
      const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 || is_space(c) || c == '_' || c == '(' || c == ')' ||
                      c == ',' || c == '+' || c == '-' || c == '*' || c == '/' || c == '%';
      if (!ok) {
        const std::string shown = static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f
                                      ? std::string("'") + c + "'"
                                      : "byte " + std::to_string(static_cast<unsigned char>(c));
        fail(std::string(field) + ": " + shown + " has no place in a size expression (names, integers, + - * / %, "
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
      if (parts[i].empty()) fail(std::string(key) + "=" + shown_text(value) + ": dimension " + std::to_string(i + 1) + " is empty");
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
      if (!detail::is_identifier(n, k_max_plan_name_length)) fail("args: " + shown_text(n) + " is not a name (a task parameter or a scratch buffer)");
      out.emplace_back(n);
    }
    return out;
  }

  int line_;
  std::string_view body_;
};

std::string join(const std::string (&dims)[3]) {
  int n = 3;
  while (n > 1 && dims[n - 1] == "1") --n;
  if (n == 1) return "(" + dims[0] + ")";
  std::string out = "(";
  for (int i = 0; i < n; ++i) out += (i > 0 ? ", " : "") + dims[i];
  return out + ")";
}

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
      while (w < comment.size() && (std::isalpha(static_cast<unsigned char>(comment[w])) != 0 || comment[w] == '-' || comment[w] == '_')) ++w;
      if (w >= comment.size() || comment[w] != ':') continue;
      const std::string_view directive = comment.substr(0, w);
      if (line.size() > k_max_plan_line_length) {
        throw LaunchPlanError("line " + std::to_string(line_no) + ": a " + std::string(directive) + " line of " + std::to_string(line.size()) +
                              " characters, over the limit of " + std::to_string(k_max_plan_line_length));
      }
      DirectiveParser p(line_no, comment.substr(w + 1));
      if (directive == "leap-launch") {
        if (out.plan.kernels.size() >= static_cast<std::size_t>(k_max_plan_kernels)) {
          throw LaunchPlanError("line " + std::to_string(line_no) + ": more than " + std::to_string(k_max_plan_kernels) + " leap-launch lines");
        }
        out.plan.kernels.push_back(p.launch());
      } else if (directive == "leap-scratch") {
        if (out.plan.scratch.size() >= static_cast<std::size_t>(k_max_plan_scratch)) {
          throw LaunchPlanError("line " + std::to_string(line_no) + ": more than " + std::to_string(k_max_plan_scratch) + " leap-scratch lines");
        }
        out.plan.scratch.push_back(p.scratch());
      } else {
        throw LaunchPlanError("line " + std::to_string(line_no) + ": unknown directive " + shown_text(directive) + ": " + std::string(k_rules));
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
  for (const ScratchDecl& s : plan.scratch) lines.emplace_back(s.line, "// leap-scratch: " + s.name + " " + std::string(to_string(s.dtype)) + " " + s.count);
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

namespace {

std::string joined_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

// The directive a problem is about ("line 4, kernel 'x'"), or the whole text for the plan's own.
std::string_view directive_of(std::string_view problem) {
  const std::size_t end = problem.find("': ");
  return problem.starts_with("line ") && end != std::string_view::npos ? problem.substr(0, end) : problem;
}

// What an argument is, as a parameter sees it: its bytes, and the declaration that takes it.
struct ArgumentShape {
  std::size_t bytes = 0;
  std::string text;         // "'n' (an int32 scalar, 4 bytes)"
  std::string declaration;  // "int", "const float*"
};

ArgumentShape argument_shape(const ResolvedArg& arg, const LaunchPlan& plan, const TaskSpec& task) {
  auto c_type = [](DType d) -> std::string {
    switch (d) {
      case DType::float32: return "float";
      case DType::float16: return "__half";
      case DType::bfloat16: return "__nv_bfloat16";
      case DType::int32: return "int";
    }
    return "float";
  };
  const std::string name = "'" + arg.name + "'";
  const std::string pointer = std::to_string(k_pointer_bytes) + "-byte pointer";
  if (arg.scratch) {
    const DType d = plan.scratch.at(arg.index).dtype;
    return {k_pointer_bytes, name + " (" + std::string(to_string(d)) + " scratch, passed as an " + pointer + ")", c_type(d) + "*"};
  }
  const Param& p = task.params.at(arg.index);
  if (p.kind == ParamKind::buffer) {
    return {k_pointer_bytes, name + " (a " + std::string(to_string(p.dtype)) + " buffer, passed as an " + pointer + ")",
            (p.role == Role::in ? "const " : "") + c_type(p.dtype) + "*"};
  }
  const std::size_t bytes = dtype_size(p.dtype);
  return {bytes, name + " (a" + (p.dtype == DType::int32 ? "n " : " ") + std::string(to_string(p.dtype)) + " scalar, " + std::to_string(bytes) + " bytes)",
          c_type(p.dtype)};
}

// The arguments of one launch against its kernel's parameters; throws LaunchPlanError naming the
// kernel, the parameter and what was passed. `where` names the directive.
void check_arguments(const std::string& where, const KernelLaunchDecl& decl, const std::vector<ResolvedArg>& args, const LaunchPlan& plan,
                     const TaskSpec& task, const KernelParams& kernel_params) {
  const auto it = kernel_params.find(decl.kernel);
  if (it == kernel_params.end()) {
    throw LaunchPlanError(where + "the compiled module does not say which parameters the kernel takes, so no arguments can be "
                                  "matched to them; declare it extern \"C\" __global__ in the source itself");
  }
  const std::vector<KernelParam>& params = it->second;
  const std::string who = decl.line > 0 ? "the plan" : "the task";
  std::string passed;
  for (const ResolvedArg& a : args) passed += (passed.empty() ? "" : ", ") + a.name;
  if (params.size() != args.size()) {
    auto count = [](std::size_t n) { return std::to_string(n) + (n == 1 ? " parameter" : " parameters"); };
    std::string fix;
    if (decl.line == 0) {
      std::string signature;
      for (const ResolvedArg& a : args) signature += (signature.empty() ? "" : ", ") + argument_shape(a, plan, task).declaration + " " + a.name;
      fix = "declare the kernel with the task's signature: (" + signature + ")";
    } else {
      fix = params.size() > args.size() ? "add the missing argument to args= or remove the parameter"
                                        : "remove the extra argument from args= or add the parameter";
    }
    throw LaunchPlanError(where + "the kernel declares " + count(params.size()) + "; " + who + " passes " + std::to_string(args.size()) +
                          " (" + (passed.empty() ? "none" : passed) + "): " + fix);
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ArgumentShape a = argument_shape(args[i], plan, task);
    if (params[i].size == a.bytes) continue;
    throw LaunchPlanError(where + "parameter " + std::to_string(i + 1) + " of " + std::to_string(params.size()) + " is " +
                          std::to_string(params[i].size) + (params[i].size == 1 ? " byte" : " bytes") + "; " + who + " passes " + a.text +
                          ": declare it `" + a.declaration + "`" + (decl.line > 0 ? " or pass an argument of its size" : ""));
  }
}

}  // namespace

LaunchPlanError::LaunchPlanError(std::vector<std::string> problems)
    : std::invalid_argument(joined_lines(problems)), problems_(std::move(problems)) {}

ResolvedPlan resolve_launch_plan(const LaunchPlan& plan, const TaskSpec& task, const Sizes& sizes, const LaunchPolicy& policy,
                                 const PlanContext& context) {
  const std::string at = " (at sizes " + sizes_text(sizes) + ")";
  ResolvedPlan r;
  std::vector<std::string> problems;  // the first problem of each directive; the rest are still checked
  if (plan.kernels.empty()) throw LaunchPlanError("the plan launches no kernel");
  if (plan.kernels.size() > static_cast<std::size_t>(policy.max_kernels)) {
    throw LaunchPlanError(std::to_string(plan.kernels.size()) + " kernels, over this task's limit of " + std::to_string(policy.max_kernels) +
                          " (fuse some of them)");
  }
  if (plan.scratch.size() > static_cast<std::size_t>(k_max_plan_scratch)) {
    throw LaunchPlanError(std::to_string(plan.scratch.size()) + " scratch buffers, over the limit of " + std::to_string(k_max_plan_scratch));
  }
  // Scratch: names unique and distinct from the task's parameters, sizes within the policy.
  std::set<std::string, std::less<>> names;
  for (const Param& p : task.params) names.insert(p.name);
  for (const ScratchDecl& s : plan.scratch) try {
    const std::string where = "line " + std::to_string(s.line) + ", scratch '" + s.name + "': ";
    if (!detail::is_identifier(s.name, k_max_plan_name_length)) throw LaunchPlanError(where + "not an identifier");
    if (!names.insert(s.name).second) throw LaunchPlanError(where + "the name is taken (by a task parameter or another scratch buffer); choose another");
    std::int64_t count = 0;
    try {
      count = eval_size_expr(s.count, sizes);
    } catch (const std::invalid_argument& e) {
      throw LaunchPlanError(where + "count: " + e.what() + at);
    }
    if (count < 1) throw LaunchPlanError(where + "count " + shown_text(s.count) + " is " + std::to_string(count) + ", not positive" + at);
    const std::uint64_t bytes = static_cast<std::uint64_t>(count) * dtype_size(s.dtype);
    if (static_cast<std::uint64_t>(count) > k_max_plan_scratch_bytes || bytes > policy.max_scratch_bytes ||
        r.scratch_bytes + bytes > policy.max_scratch_bytes) {
      throw LaunchPlanError(where + std::to_string(count) + " elements of " + std::string(to_string(s.dtype)) +
                            " bring the plan's scratch over this task's limit of " + std::to_string(policy.max_scratch_bytes) +
                            " bytes" + at);
    }
    r.scratch.push_back({s.name, s.dtype, static_cast<std::size_t>(count), static_cast<std::size_t>(bytes)});
    r.scratch_bytes += static_cast<std::size_t>(bytes);
  } catch (const LaunchPlanError& e) {
    problems.push_back(e.what());
  }
  const std::uint64_t shared_hi = context.device_max_shared_bytes > 0 ? std::min(policy.max_shared_bytes, context.device_max_shared_bytes)
                                                                        : policy.max_shared_bytes;
  const char* axis[3] = {"x", "y", "z"};
  for (const KernelLaunchDecl& k : plan.kernels) try {
    const std::string where = (k.line > 0 ? "line " + std::to_string(k.line) + ", " : std::string("the task's launch, ")) + "kernel '" + k.kernel + "': ";
    if (!detail::is_identifier(k.kernel, k_max_plan_name_length)) throw LaunchPlanError(where + "not an identifier");
    if (context.module_kernels != nullptr &&
        std::find(context.module_kernels->begin(), context.module_kernels->end(), k.kernel) == context.module_kernels->end()) {
      std::string have;
      for (const std::string& n : *context.module_kernels) have += (have.empty() ? "" : ", ") + n;
      throw LaunchPlanError(where + "no such kernel in the module (it has: " + (have.empty() ? "none" : have) +
                            "); declare it extern \"C\" __global__, or instantiate a template explicitly");
    }
    ResolvedKernelLaunch out;
    out.kernel = k.kernel;
    auto eval = [&](const std::string& e, const std::string& field, std::int64_t lo, std::int64_t hi, const std::string& limit) {
      std::int64_t v = 0;
      try {
        v = eval_size_expr(e, sizes);
      } catch (const std::invalid_argument& ex) {
        throw LaunchPlanError(where + field + ": " + ex.what() + at);
      }
      if (v < lo) throw LaunchPlanError(where + field + " " + shown_text(e) + " is " + std::to_string(v) + ", below " + std::to_string(lo) + at);
      if (v > hi) throw LaunchPlanError(where + field + " " + shown_text(e) + " is " + std::to_string(v) + ", over " + limit + at);
      return v;
    };
    std::uint64_t threads = 1;
    for (int i = 0; i < 3; ++i) {
      out.shape.grid[i] = static_cast<unsigned>(eval(k.grid[i], std::string("grid ") + axis[i], 1, k_max_grid_dims[i],
                                                     "the limit of " + std::to_string(k_max_grid_dims[i]) + " blocks in " + axis[i]));
      out.shape.block[i] = static_cast<unsigned>(eval(k.block[i], std::string("block ") + axis[i], 1, k_max_block_dims[i],
                                                      "the limit of " + std::to_string(k_max_block_dims[i]) + " threads in " + axis[i]));
      threads *= out.shape.block[i];
    }
    const std::uint64_t threads_hi = std::min(k_max_threads_per_block, policy.max_threads_per_block);
    if (threads > threads_hi) {
      throw LaunchPlanError(where + "block=" + join(k.block) + " is " + std::to_string(threads) + " threads per block, over " +
                            (policy.max_threads_per_block < k_max_threads_per_block ? "this task's limit of " : "the limit of ") + std::to_string(threads_hi) + at);
    }
    const std::string shared_limit = shared_hi == context.device_max_shared_bytes && shared_hi < policy.max_shared_bytes
                                         ? "the device's limit of " + std::to_string(shared_hi) + " bytes"
                                         : "this task's limit of " + std::to_string(shared_hi) + " bytes";
    out.shape.shared_bytes = static_cast<unsigned>(eval(k.shared_bytes, "shared", 0, static_cast<std::int64_t>(shared_hi), shared_limit));
    if (!k.args) {
      for (std::size_t i = 0; i < task.params.size(); ++i) out.args.push_back({task.params[i].name, false, i});
    } else {
      for (const std::string& a : *k.args) {
        const auto param = std::find_if(task.params.begin(), task.params.end(), [&](const Param& p) { return p.name == a; });
        const auto scratch = std::find_if(plan.scratch.begin(), plan.scratch.end(), [&](const ScratchDecl& s) { return s.name == a; });
        const bool found = param != task.params.end() || scratch != plan.scratch.end();
        if (!found) {
          std::string known;
          for (const Param& p : task.params) known += (known.empty() ? "" : ", ") + p.name;
          for (const ScratchDecl& s : plan.scratch) known += (known.empty() ? "" : ", ") + s.name;
          throw LaunchPlanError(where + "args: unknown name '" + a + "' (the task's parameters and the plan's scratch: " + known + ")");
        }
        if (param != task.params.end()) out.args.push_back({a, false, static_cast<std::size_t>(param - task.params.begin())});
        else out.args.push_back({a, true, static_cast<std::size_t>(scratch - plan.scratch.begin())});
      }
    }
    if (context.kernel_params != nullptr) check_arguments(where, k, out.args, plan, task, *context.kernel_params);
    r.kernels.push_back(std::move(out));
  } catch (const LaunchPlanError& e) {
    problems.push_back(e.what());
  }
  if (!problems.empty()) throw LaunchPlanError(std::move(problems));
  return r;
}

std::string to_text(const ResolvedPlan& plan) {
  auto dims = [](const unsigned (&d)[3]) {
    std::string out = "(" + std::to_string(d[0]);
    if (d[1] != 1 || d[2] != 1) out += ", " + std::to_string(d[1]);
    if (d[2] != 1) out += ", " + std::to_string(d[2]);
    return out + ")";
  };
  std::string out;
  for (const ResolvedKernelLaunch& k : plan.kernels) {
    out += (out.empty() ? "" : "; ") + k.kernel + " grid=" + dims(k.shape.grid) + " block=" + dims(k.shape.block);
    if (k.shape.shared_bytes > 0) out += " shared=" + std::to_string(k.shape.shared_bytes);
  }
  for (const ResolvedScratch& s : plan.scratch) {
    out += "; scratch " + s.name + ": " + std::to_string(s.count) + " x " + std::string(to_string(s.dtype));
  }
  return out;
}

PlanCheck check_candidate_plan(const LaunchPlan& plan, const TaskSpec& task, const PlanContext& context) {
  PlanCheck c;
  if (!task.candidate_launch.allowed) {
    c.status = PlanStatus::refused;
    std::string fixed = to_directives(task_launch_plan(task)).substr(3);  // "leap-launch: ...\n"
    fixed.pop_back();
    c.error = "task '" + task.name + "' fixes its launch (" + fixed +
              "); remove the leap-launch and leap-scratch lines and write the kernel for that launch";
    return c;
  }
  try {
    std::vector<const Sizes*> all{&task.sizes};
    for (const Sizes& s : task.check_sizes) all.push_back(&s);
    // Every size set is checked; a directive's problem is told once, at the first size set that shows it.
    std::vector<std::string> problems;
    for (std::size_t i = all.size(); i-- > 0;) {  // the timing sizes last, so theirs is the plan reported
      try {
        ResolvedPlan r = resolve_launch_plan(plan, task, *all[i], task.candidate_launch, context);
        if (i == 0) c.resolved = std::move(r);
      } catch (const LaunchPlanError& e) {
        for (const std::string& p : e.problems()) {
          const bool told = std::any_of(problems.begin(), problems.end(),
                                        [&](const std::string& q) { return directive_of(q) == directive_of(p); });
          if (!told) problems.push_back(p);
        }
      }
    }
    if (!problems.empty()) {
      c.status = PlanStatus::invalid;
      c.error = joined_lines(problems);
      c.resolved.reset();
    }
  } catch (const std::exception& e) {
    c.status = PlanStatus::invalid;
    c.error = std::string("the launch plan could not be checked: ") + e.what();
    c.resolved.reset();
  }
  return c;
}

}  // namespace leap::sandbox

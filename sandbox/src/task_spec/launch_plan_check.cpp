// SPDX-License-Identifier: Apache-2.0
// A launch plan checked against its task at each set of sizes: names, scratch sizes, grid, block and
// shared memory within the task's policy and the device, and every launch's arguments against the
// parameters the compiled kernel declares. A plan's problems are gathered, one per directive.
#include "leap/sandbox/launch_plan.hpp"

#include <algorithm>
#include <set>

#include "common/identifier.hpp"
#include "task_spec/launch_plan_text.hpp"
#include "task_spec/size_expr.hpp"

namespace leap::sandbox {
namespace {

using namespace detail::launch_plan_text;

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
      case DType::int8: return "signed char";
    }
    return "float";
  };
  const std::string name = "'" + arg.name + "'";
  const std::string pointer = std::to_string(k_pointer_bytes) + "-byte pointer";
  if (arg.scratch) {
    const DType d = plan.scratch.at(arg.index).dtype;
    return {k_pointer_bytes, name + " (" + std::string(to_string(d)) + " scratch, passed as an " + pointer + ")",
            c_type(d) + "*"};
  }
  const Param& p = task.params.at(arg.index);
  if (p.kind == ParamKind::buffer) {
    return {k_pointer_bytes, name + " (a " + std::string(to_string(p.dtype)) + " buffer, passed as an " + pointer + ")",
            (p.role == Role::in ? "const " : "") + c_type(p.dtype) + "*"};
  }
  const std::size_t bytes = dtype_size(p.dtype);
  return {bytes,
          name + " (a" + (p.dtype == DType::int32 ? "n " : " ") + std::string(to_string(p.dtype)) + " scalar, " +
              std::to_string(bytes) + " bytes)",
          c_type(p.dtype)};
}

// The arguments of one launch against its kernel's parameters; throws LaunchPlanError naming the
// kernel, the parameter and what was passed. `where` names the directive.
void check_arguments(const std::string& where, const KernelLaunchDecl& decl, const std::vector<ResolvedArg>& args,
                     const LaunchPlan& plan, const TaskSpec& task, const KernelParams& kernel_params) {
  const auto it = kernel_params.find(decl.kernel);
  if (it == kernel_params.end()) {
    throw LaunchPlanError(where +
                          "the compiled module does not say which parameters the kernel takes, so no arguments can be "
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
      for (const ResolvedArg& a : args)
        signature += (signature.empty() ? "" : ", ") + argument_shape(a, plan, task).declaration + " " + a.name;
      fix = "declare the kernel with the task's signature: (" + signature + ")";
    } else {
      fix = params.size() > args.size() ? "add the missing argument to args= or remove the parameter"
                                        : "remove the extra argument from args= or add the parameter";
    }
    throw LaunchPlanError(where + "the kernel declares " + count(params.size()) + "; " + who + " passes " +
                          std::to_string(args.size()) + " (" + (passed.empty() ? "none" : passed) + "): " + fix);
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    const ArgumentShape a = argument_shape(args[i], plan, task);
    if (params[i].size == a.bytes) continue;
    throw LaunchPlanError(where + "parameter " + std::to_string(i + 1) + " of " + std::to_string(params.size()) +
                          " is " + std::to_string(params[i].size) + (params[i].size == 1 ? " byte" : " bytes") + "; " +
                          who + " passes " + a.text + ": declare it `" + a.declaration + "`" +
                          (decl.line > 0 ? " or pass an argument of its size" : ""));
  }
}

}  // namespace

LaunchPlanError::LaunchPlanError(std::vector<std::string> problems)
    : std::invalid_argument(joined_lines(problems)), problems_(std::move(problems)) {}

ResolvedPlan resolve_launch_plan(const LaunchPlan& plan, const TaskSpec& task, const Sizes& sizes,
                                 const LaunchPolicy& policy, const PlanContext& context) {
  const std::string at = " (at sizes " + sizes_text(sizes) + ")";
  ResolvedPlan r;
  std::vector<std::string> problems;  // the first problem of each directive; the rest are still checked
  if (plan.kernels.empty()) throw LaunchPlanError("the plan launches no kernel");
  if (plan.kernels.size() > static_cast<std::size_t>(policy.max_kernels)) {
    throw LaunchPlanError(std::to_string(plan.kernels.size()) + " kernels, over this task's limit of " +
                          std::to_string(policy.max_kernels) + " (fuse some of them)");
  }
  if (plan.scratch.size() > static_cast<std::size_t>(k_max_plan_scratch)) {
    throw LaunchPlanError(std::to_string(plan.scratch.size()) + " scratch buffers, over the limit of " +
                          std::to_string(k_max_plan_scratch));
  }
  // Scratch: names unique and distinct from the task's parameters, sizes within the policy.
  std::set<std::string, std::less<>> names;
  for (const Param& p : task.params) names.insert(p.name);
  for (const ScratchDecl& s : plan.scratch) try {
      const std::string where = "line " + std::to_string(s.line) + ", scratch '" + s.name + "': ";
      if (!detail::is_identifier(s.name, k_max_plan_name_length)) throw LaunchPlanError(where + "not an identifier");
      if (!names.insert(s.name).second)
        throw LaunchPlanError(where +
                              "the name is taken (by a task parameter or another scratch buffer); choose another");
      std::int64_t count = 0;
      try {
        count = eval_size_expr(s.count, sizes);
      } catch (const std::invalid_argument& e) {
        throw LaunchPlanError(where + "count: " + e.what() + at);
      }
      if (count < 1)
        throw LaunchPlanError(where + "count " + shown_text(s.count) + " is " + std::to_string(count) +
                              ", not positive" + at);
      const std::uint64_t bytes = static_cast<std::uint64_t>(count) * dtype_size(s.dtype);
      if (static_cast<std::uint64_t>(count) > k_max_plan_scratch_bytes || bytes > policy.max_scratch_bytes ||
          r.scratch_bytes + bytes > policy.max_scratch_bytes) {
        throw LaunchPlanError(where + std::to_string(count) + " elements of " + std::string(to_string(s.dtype)) +
                              " bring the plan's scratch over this task's limit of " +
                              std::to_string(policy.max_scratch_bytes) + " bytes" + at);
      }
      r.scratch.push_back({s.name, s.dtype, static_cast<std::size_t>(count), static_cast<std::size_t>(bytes)});
      r.scratch_bytes += static_cast<std::size_t>(bytes);
    } catch (const LaunchPlanError& e) {
      problems.push_back(e.what());
    }
  const std::uint64_t shared_hi = context.device_max_shared_bytes > 0
                                      ? std::min(policy.max_shared_bytes, context.device_max_shared_bytes)
                                      : policy.max_shared_bytes;
  const char* axis[3] = {"x", "y", "z"};
  for (const KernelLaunchDecl& k : plan.kernels) try {
      const std::string where =
          (k.line > 0 ? "line " + std::to_string(k.line) + ", " : std::string("the task's launch, ")) + "kernel '" +
          k.kernel + "': ";
      if (!detail::is_identifier(k.kernel, k_max_plan_name_length)) throw LaunchPlanError(where + "not an identifier");
      if (context.module_kernels != nullptr && std::find(context.module_kernels->begin(), context.module_kernels->end(),
                                                         k.kernel) == context.module_kernels->end()) {
        std::string have;
        for (const std::string& n : *context.module_kernels) have += (have.empty() ? "" : ", ") + n;
        throw LaunchPlanError(where + "no such kernel in the module (it has: " + (have.empty() ? "none" : have) +
                              "); declare it extern \"C\" __global__, or instantiate a template explicitly");
      }
      ResolvedKernelLaunch out;
      out.kernel = k.kernel;
      auto eval = [&](const std::string& e, const std::string& field, std::int64_t lo, std::int64_t hi,
                      const std::string& limit) {
        std::int64_t v = 0;
        try {
          v = eval_size_expr(e, sizes);
        } catch (const std::invalid_argument& ex) {
          throw LaunchPlanError(where + field + ": " + ex.what() + at);
        }
        if (v < lo)
          throw LaunchPlanError(where + field + " " + shown_text(e) + " is " + std::to_string(v) + ", below " +
                                std::to_string(lo) + at);
        if (v > hi)
          throw LaunchPlanError(where + field + " " + shown_text(e) + " is " + std::to_string(v) + ", over " + limit +
                                at);
        return v;
      };
      std::uint64_t threads = 1;
      for (int i = 0; i < 3; ++i) {
        out.shape.grid[i] =
            static_cast<unsigned>(eval(k.grid[i], std::string("grid ") + axis[i], 1, k_max_grid_dims[i],
                                       "the limit of " + std::to_string(k_max_grid_dims[i]) + " blocks in " + axis[i]));
        out.shape.block[i] = static_cast<unsigned>(
            eval(k.block[i], std::string("block ") + axis[i], 1, k_max_block_dims[i],
                 "the limit of " + std::to_string(k_max_block_dims[i]) + " threads in " + axis[i]));
        threads *= out.shape.block[i];
      }
      const std::uint64_t threads_hi = std::min(k_max_threads_per_block, policy.max_threads_per_block);
      if (threads > threads_hi) {
        throw LaunchPlanError(
            where + "block=" + join(k.block) + " is " + std::to_string(threads) + " threads per block, over " +
            (policy.max_threads_per_block < k_max_threads_per_block ? "this task's limit of " : "the limit of ") +
            std::to_string(threads_hi) + at);
      }
      const std::string shared_limit =
          shared_hi == context.device_max_shared_bytes && shared_hi < policy.max_shared_bytes
              ? "the device's limit of " + std::to_string(shared_hi) + " bytes"
              : "this task's limit of " + std::to_string(shared_hi) + " bytes";
      out.shape.shared_bytes =
          static_cast<unsigned>(eval(k.shared_bytes, "shared", 0, static_cast<std::int64_t>(shared_hi), shared_limit));
      if (!k.args) {
        for (std::size_t i = 0; i < task.params.size(); ++i) out.args.push_back({task.params[i].name, false, i});
      } else {
        for (const std::string& a : *k.args) {
          const auto param =
              std::find_if(task.params.begin(), task.params.end(), [&](const Param& p) { return p.name == a; });
          const auto scratch =
              std::find_if(plan.scratch.begin(), plan.scratch.end(), [&](const ScratchDecl& s) { return s.name == a; });
          const bool found = param != task.params.end() || scratch != plan.scratch.end();
          if (!found) {
            std::string known;
            for (const Param& p : task.params) known += (known.empty() ? "" : ", ") + p.name;
            for (const ScratchDecl& s : plan.scratch) known += (known.empty() ? "" : ", ") + s.name;
            throw LaunchPlanError(where + "args: unknown name '" + a +
                                  "' (the task's parameters and the plan's scratch: " + known + ")");
          }
          if (param != task.params.end())
            out.args.push_back({a, false, static_cast<std::size_t>(param - task.params.begin())});
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
  auto dims = [](const unsigned(&d)[3]) {
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

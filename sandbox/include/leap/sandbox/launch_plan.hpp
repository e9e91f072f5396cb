// SPDX-License-Identifier: Apache-2.0
// A launch plan: which kernels run, in which order, with which grid, block, dynamic shared memory,
// arguments and scratch memory. A task's own `launch` is a plan of one kernel; a candidate may
// declare its own in its source when the task allows it (TaskSpec::candidate_launch).
//
// The syntax: one directive per `//` line comment, anywhere in the source; other lines are ignored.
//   // leap-launch: KERNEL grid=DIMS block=DIMS [shared=EXPR] [args=(NAME, ...)]
//   // leap-scratch: NAME DTYPE COUNT
// - KERNEL is an extern "C" __global__ function of the module. Kernels run in the order of their
//   lines, one after the other on one stream; the whole sequence is one run (timed as one).
// - DIMS is (X[, Y[, Z]]), the parentheses optional; missing dimensions are 1. EXPR and COUNT are
//   size expressions over the task's Sizes (task.hpp): ceil_div(n, 256), rows * 4, min(n, 1024).
// - shared: dynamic shared memory in bytes (default 0); above 48 KiB the harness opts in for it.
// - args: the kernel's arguments in order, each the name of a task parameter or of a scratch buffer
//   (default: the task's parameters in order, which is the task's signature).
// - A scratch buffer is COUNT elements of DTYPE (float32, float16, bfloat16, int32) in device
//   memory, passed as a pointer. It is poisoned before every run, so nothing survives from one run to
//   the next, and guarded like the task's buffers.
// Example, a two-pass sum of x[n] into out[0]:
//   // leap-scratch: partials float32 ceil_div(n, 256)
//   // leap-launch: partial_sums grid=ceil_div(n, 256) block=256 shared=256 * 4 args=(x, partials, n)
//   // leap-launch: final_sum grid=1 block=1024 args=(partials, out, n)
// Limits against hostile sources: a directive line of at most k_max_plan_line_length characters, at
// most k_max_plan_kernels launch and k_max_plan_scratch scratch lines, expressions within
// the size expressions' limits (4096 characters, 64 levels). Past a limit the plan is invalid, with the reason; nothing
// is thrown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox {

constexpr std::size_t k_max_plan_line_length = 2048;

struct KernelLaunchDecl {
  std::string kernel;
  std::string grid[3] = {"1", "1", "1"};
  std::string block[3] = {"1", "1", "1"};
  std::string shared_bytes = "0";
  std::optional<std::vector<std::string>> args;  // nullopt: the task's parameters in order
  int line = 0;                                  // the directive's line in the source; 0: the task's launch
};

struct ScratchDecl {
  std::string name;
  DType dtype = DType::float32;
  std::string count;  // a size expression: elements
  int line = 0;
};

struct LaunchPlan {
  std::vector<KernelLaunchDecl> kernels;
  std::vector<ScratchDecl> scratch;
  bool empty() const noexcept { return kernels.empty() && scratch.empty(); }
};

struct PlanParse {
  LaunchPlan plan;    // empty when the source declares nothing
  std::string error;  // non-empty: the first malformed directive, with its line and what to write
  bool ok() const noexcept { return error.empty(); }
};

// The directives of a candidate's source. Never throws for any input.
PlanParse parse_launch_plan(std::string_view source);
// The plan as canonical directive lines, each on its source line (blank lines between);
// parse_launch_plan(to_directives(p)) gives p back.
std::string to_directives(const LaunchPlan& plan);
// The task's own launch as a plan: its entry with the task's parameters and its LaunchConfig.
LaunchPlan task_launch_plan(const TaskSpec& task);

// One kernel launch with every expression evaluated at one size set.
struct ResolvedArg {
  std::string name;
  bool scratch = false;  // false: task.params[index]; true: the plan's scratch[index]
  std::size_t index = 0;
};
struct ResolvedKernelLaunch {
  std::string kernel;
  ResolvedLaunch shape;
  std::vector<ResolvedArg> args;
};
struct ResolvedScratch {
  std::string name;
  DType dtype = DType::float32;
  std::size_t count = 0;
  std::size_t bytes = 0;
};
struct ResolvedPlan {
  std::vector<ResolvedKernelLaunch> kernels;
  std::vector<ResolvedScratch> scratch;
  std::size_t scratch_bytes = 0;
};

// One line for feedback: "partial_sums grid=(16) block=(256) shared=1024; final_sum grid=(1)
// block=(1024); scratch partials: 16 x float32".
std::string to_text(const ResolvedPlan& plan);

// A plan that breaks rules: one problem per directive that breaks one (its first), each naming the
// directive's line, the field, the value and the limit, e.g. "line 4, kernel 'final_sum':
// block=(2048): 2048 threads per block, over the limit of 1024 (at sizes {n=5})". what() is the
// problems one per line, so a candidate hears of every broken directive in one answer.
class LaunchPlanError : public std::invalid_argument {
 public:
  explicit LaunchPlanError(const std::string& problem) : LaunchPlanError(std::vector<std::string>{problem}) {}
  explicit LaunchPlanError(std::vector<std::string> problems);
  const std::vector<std::string>& problems() const noexcept { return problems_; }

 private:
  std::vector<std::string> problems_;
};

// One parameter of a compiled kernel: where it sits in the kernel's parameter block and its bytes.
struct KernelParam {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
  bool operator==(const KernelParam&) const = default;
};
// Each kernel's parameters in declaration order, by kernel name.
using KernelParams = std::map<std::string, std::vector<KernelParam>, std::less<>>;

// The bytes an argument takes in a kernel's parameter block: a buffer or scratch is passed as an
// 8-byte device pointer, a scalar as its dtype (float32 and int32: 4 bytes).
constexpr std::size_t k_pointer_bytes = 8;

// What a plan is checked against besides the task and its policy.
struct PlanContext {
  const std::vector<std::string>* module_kernels = nullptr;  // the module's kernels (ELF); null: not checked
  std::uint64_t device_max_shared_bytes = 0;                 // the device's opt-in limit; 0: unknown
  // The module's kernels' parameters (the CUBIN's, or the driver's); null: not checked. Every
  // launch's arguments must match its kernel's parameters in count and in bytes, one by one; a
  // kernel missing here has parameters nobody could read, and is refused.
  const KernelParams* kernel_params = nullptr;
};

// The bounds a task's own launch is checked with: only the hardware's.
constexpr LaunchPolicy k_task_launch_bounds{true, 1, k_max_threads_per_block, k_max_plan_shared_bytes, 0};

// Every rule at one size set: kernels within the policy's count, names known (kernels in the module,
// args among the task's parameters and the plan's scratch), args matching the kernel's parameters
// (count and bytes, when the context has them), block dimensions within 1024/1024/64 and
// their product within the policy's threads per block, grid within 2^31-1/65535/65535, dynamic
// shared memory within the policy and the device, scratch within the policy, no overflow anywhere.
// `policy` bounds the plan (a task's own launch is checked with the widest policy). Throws
// LaunchPlanError with every directive that breaks a rule.
ResolvedPlan resolve_launch_plan(const LaunchPlan& plan, const TaskSpec& task, const Sizes& sizes,
                                 const LaunchPolicy& policy, const PlanContext& context = {});

enum class PlanStatus : std::uint8_t {
  ok,       // valid at every size set of the task
  invalid,  // breaks a rule; the message says which and what to change
  refused,  // the task fixes its launch and the candidate declared a plan
};
std::string_view to_string(PlanStatus status) noexcept;  // "ok", "invalid", "refused"

struct PlanCheck {
  PlanStatus status = PlanStatus::ok;
  std::string error;
  std::optional<ResolvedPlan> resolved;  // at the task's timing sizes, when ok
};

// A candidate's declared plan against the task's policy at every size set of the task (the timing
// sizes and every check set). Never throws for a candidate's plan.
PlanCheck check_candidate_plan(const LaunchPlan& plan, const TaskSpec& task, const PlanContext& context = {});

}  // namespace leap::sandbox

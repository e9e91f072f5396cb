// SPDX-License-Identifier: Apache-2.0
#include "verify/kernel_run.hpp"

#include <chrono>
#include <cstdint>
#include <cstring>

#include "evaluation/output_poison.hpp"
#include "task_spec/size_expr.hpp"

namespace leap::sandbox::verify {

namespace rt = cpu_runtime;

SourcePlan plan_of(const TaskSpec& task, const std::string& source) {
  SourcePlan p;
  const PlanParse parsed = parse_launch_plan(source);
  if (!parsed.ok()) {
    p.error = parsed.error;
    return p;
  }
  p.own_launch = parsed.plan.empty();
  p.plan = p.own_launch ? task_launch_plan(task) : parsed.plan;
  return p;
}

void poison(DType dtype, std::uint64_t seed, Bytes& buffer) {
  const std::uint32_t pattern = poison_pattern(dtype, seed);
  const std::size_t width = dtype_size(dtype);
  for (std::size_t at = 0; at + width <= buffer.size(); at += width) {
    if (width == 4) std::memcpy(&buffer[at], &pattern, 4);
    else if (width == 2) {
      const auto half = static_cast<std::uint16_t>(pattern);
      std::memcpy(&buffer[at], &half, 2);
    } else {
      buffer[at] = static_cast<unsigned char>(pattern);
    }
  }
}

namespace {

// The arguments of one launch, pointing into the run's own buffers and scalar values.
struct ArgumentStore {
  std::vector<void*> pointers;     // by parameter
  std::vector<std::int32_t> ints;  // by parameter
  std::vector<float> floats;       // by parameter
  std::vector<Bytes> scratch;      // by scratch buffer
  std::vector<void*> scratch_pointers;
};

std::vector<void*> arguments_of(const ResolvedKernelLaunch& k, const TaskSpec& task, ArgumentStore& s) {
  std::vector<void*> args;
  for (const ResolvedArg& a : k.args) {
    if (a.scratch) args.push_back(&s.scratch_pointers[a.index]);
    else if (task.params[a.index].kind == ParamKind::buffer) args.push_back(&s.pointers[a.index]);
    else if (task.params[a.index].dtype == DType::int32) args.push_back(&s.ints[a.index]);
    else args.push_back(&s.floats[a.index]);
  }
  return args;
}

}  // namespace

KernelRun run_kernels(const rt::Module& module, const SourcePlan& plan, const TaskSpec& task, const Trial& trial,
                      const rt::Schedule& schedule, std::uint64_t poison_seed) {
  KernelRun run;
  if (!plan.error.empty()) {
    run.failure = "launch plan: " + plan.error;
    return run;
  }
  ResolvedPlan resolved;
  try {
    resolved = resolve_launch_plan(plan.plan, task, trial.sizes,
                                   plan.own_launch ? k_task_launch_bounds : task.candidate_launch);
  } catch (const std::invalid_argument& e) {  // LaunchPlanError, TaskError
    run.failure = std::string("launch plan refused: ") + e.what();
    return run;
  }
  std::vector<Bytes> buffers = trial.buffers;
  const std::size_t np = task.params.size();
  ArgumentStore s;
  s.pointers.assign(np, nullptr);
  s.ints.assign(np, 0);
  s.floats.assign(np, 0.0f);
  for (std::size_t i = 0; i < np; ++i) {
    const Param& p = task.params[i];
    if (p.kind == ParamKind::scalar) {
      s.ints[i] = static_cast<std::int32_t>(trial.scalars[i]);
      s.floats[i] = static_cast<float>(trial.scalars[i]);
      continue;
    }
    if (p.role == Role::out) poison(p.dtype, poison_seed, buffers[i]);
    s.pointers[i] = buffers[i].data();
  }
  for (const ResolvedScratch& sc : resolved.scratch) {
    s.scratch.emplace_back(sc.bytes, 0);
    poison(sc.dtype, poison_seed + 1, s.scratch.back());
  }
  for (Bytes& b : s.scratch) s.scratch_pointers.push_back(b.data());
  rt::LaunchOptions options;
  options.time_limit = std::chrono::seconds(60);
  for (const ResolvedKernelLaunch& k : resolved.kernels) {
    const rt::Kernel* kernel = module.find(k.kernel);
    if (kernel == nullptr) {
      run.failure = "no kernel '" + k.kernel + "' in the source";
      return run;
    }
    const std::vector<void*> args = arguments_of(k, task, s);
    try {
      const rt::LaunchResult r = rt::launch(*kernel, {k.shape.grid[0], k.shape.grid[1], k.shape.grid[2]},
                                            {k.shape.block[0], k.shape.block[1], k.shape.block[2]},
                                            k.shape.shared_bytes, std::span<void* const>(args), schedule, options);
      if (!r.ok()) {
        run.failure = "kernel '" + k.kernel + "': " + std::string(rt::to_string(r.failure)) + ": " + r.message;
        return run;
      }
    } catch (const rt::LaunchError& e) {
      run.failure = "kernel '" + k.kernel + "': " + e.what();
      return run;
    }
  }
  run.outputs.resize(np);
  for (std::size_t i = 0; i < np; ++i)
    if (is_output(task.params[i])) run.outputs[i] = std::move(buffers[i]);
  return run;
}

}  // namespace leap::sandbox::verify

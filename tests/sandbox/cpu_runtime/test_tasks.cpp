// SPDX-License-Identifier: Apache-2.0
// The built-in tasks' own kernels on the CPU runtime: every reference and fast variant (and row_sum's
// two-kernel plan) runs each of the task's check sizes under every schedule, with the same bits under
// each, and the fast variant matches the reference within the task's tolerance; row_sum's reference
// also matches a plain sum. (The verification of each reference against an oracle written apart from
// it is `leap-sandbox tasks verify`'s; this holds the runtime to the kernels it is for.)
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cpu_runtime_support.hpp"
#include "evaluation/input_generator.hpp"
#include "evaluation/output_comparison.hpp"
#include "task_spec/size_expr.hpp"
#include "leap/sandbox/builtin_tasks.hpp"
#include "leap/sandbox/launch_plan.hpp"

namespace leap::cpu_runtime::test {
namespace {

using sandbox::BuiltinTask;
using sandbox::ParamKind;

struct Outputs {
  std::vector<std::vector<unsigned char>> buffers;  // every out and inout buffer, in parameter order
  bool operator==(const Outputs&) const = default;
};

// Runs a variant's launch plan (the task's own launch when it declares none) at `sizes`.
Outputs run_variant(const BuiltinTask& task, const std::string& variant, const sandbox::Sizes& sizes,
                    const Schedule& schedule) {
  const sandbox::TaskSpec& spec = task.spec;
  const Module& m = module("leap_cpu_task_" + spec.name + "_" + variant);
  const sandbox::PlanParse parsed = sandbox::parse_launch_plan(task.variant(variant)->source);
  REQUIRE(parsed.ok());
  const bool own = parsed.plan.empty();
  const sandbox::LaunchPlan plan = own ? sandbox::task_launch_plan(spec) : parsed.plan;
  const sandbox::ResolvedPlan resolved =
      sandbox::resolve_launch_plan(plan, spec, sizes, own ? sandbox::k_task_launch_bounds : spec.candidate_launch);

  std::vector<std::vector<unsigned char>> buffers(spec.params.size());
  std::vector<void*> pointers(spec.params.size(), nullptr);
  std::vector<std::int32_t> ints(spec.params.size(), 0);
  std::vector<float> floats(spec.params.size(), 0.0f);
  for (std::size_t i = 0; i < spec.params.size(); ++i) {
    const sandbox::Param& p = spec.params[i];
    if (p.kind == ParamKind::scalar) {
      if (p.dtype == sandbox::DType::int32) {
        ints[i] = static_cast<std::int32_t>(sandbox::eval_size_expr(p.value, sizes));
      } else {
        floats[i] = std::strtof(p.value.c_str(), nullptr);
      }
      continue;
    }
    const std::size_t n = sandbox::element_count(p, sizes);
    buffers[i].assign(n * sandbox::dtype_size(p.dtype), 0xFF);
    if (p.role != sandbox::Role::out)
      sandbox::detail::generate_inputs_on_host(p.dtype, sandbox::generator_at(p, sizes), 1000 + i, buffers[i].data(),
                                               n);
    pointers[i] = buffers[i].data();
  }
  std::vector<std::vector<unsigned char>> scratch;
  std::vector<void*> scratch_pointers;
  for (const sandbox::ResolvedScratch& s : resolved.scratch) {
    scratch.emplace_back(s.bytes, 0xFF);
    scratch_pointers.push_back(scratch.back().data());
  }
  for (const sandbox::ResolvedKernelLaunch& k : resolved.kernels) {
    std::vector<void*> args;
    for (const sandbox::ResolvedArg& a : k.args) {
      if (a.scratch) {
        args.push_back(&scratch_pointers[a.index]);
      } else if (spec.params[a.index].kind == ParamKind::buffer) {
        args.push_back(&pointers[a.index]);
      } else if (spec.params[a.index].dtype == sandbox::DType::int32) {
        args.push_back(&ints[a.index]);
      } else {
        args.push_back(&floats[a.index]);
      }
    }
    const LaunchResult r = launch(m.kernel(k.kernel), {k.shape.grid[0], k.shape.grid[1], k.shape.grid[2]},
                                  {k.shape.block[0], k.shape.block[1], k.shape.block[2]}, k.shape.shared_bytes,
                                  std::span<void* const>(args), schedule);
    INFO(spec.name << " " << variant << ": " << r.message);
    REQUIRE(r.ok());
  }
  Outputs out;
  for (std::size_t i = 0; i < spec.params.size(); ++i)
    if (spec.params[i].kind == ParamKind::buffer && spec.params[i].role != sandbox::Role::in)
      out.buffers.push_back(buffers[i]);
  return out;
}

// The tasks whose kernels CMakeLists.txt compiles for these tests (the first eight; every task, these
// included, is verified against its oracle by `leap-sandbox tasks verify`, CTest tasks_verify:NAME).
constexpr const char* k_tasks_with_modules[] = {"gelu_fp16", "layernorm", "matmul",  "row_scan",
                                                "row_sum",   "scale_add", "softmax", "transpose"};

TEST_CASE("every built-in task's reference and fast kernels run on the CPU runtime, the same under every schedule",
          "[cpu_runtime][tasks]") {
  for (const char* name : k_tasks_with_modules) {
    const BuiltinTask* found = sandbox::find_builtin_task(name);
    INFO(name);
    REQUIRE(found != nullptr);
    const BuiltinTask& task = *found;
    std::vector<std::string> variants{"reference", "fast"};
    if (task.variant("two_pass") != nullptr) variants.emplace_back("two_pass");
    for (const sandbox::Sizes& sizes : task.spec.check_sizes) {
      std::vector<Outputs> first;
      for (const std::string& variant : variants) {
        const std::vector<Schedule> schedules = all_schedules();
        const Outputs in_order = run_variant(task, variant, sizes, schedules[0]);
        for (std::size_t s = 1; s < schedules.size(); ++s) {
          INFO(task.spec.name << " " << variant << " at " << sandbox::sizes_text(sizes) << " under "
                              << schedules[s].name());
          CHECK(run_variant(task, variant, sizes, schedules[s]) == in_order);
        }
        first.push_back(in_order);
      }
      // Each variant against the reference, buffer by buffer, within the task's tolerance.
      std::size_t b = 0;
      for (const sandbox::Param& p : task.spec.params) {
        if (p.kind != ParamKind::buffer || p.role == sandbox::Role::in) continue;
        const std::size_t n = sandbox::element_count(p, sizes);
        for (std::size_t v = 1; v < first.size(); ++v) {
          const sandbox::Comparison c = sandbox::compare(
              p.dtype, first[v].buffers[b].data(), first[0].buffers[b].data(), n, task.spec.tolerance_for(p.dtype));
          INFO(task.spec.name << " " << variants[v] << " at " << sandbox::sizes_text(sizes) << ": "
                              << sandbox::describe(c, p.name, n));
          CHECK(c.ok);
        }
        ++b;
      }
    }
  }
}

TEST_CASE("row_sum's reference on the CPU runtime is the plain sum of each row", "[cpu_runtime][tasks]") {
  const BuiltinTask* task = sandbox::find_builtin_task("row_sum");
  REQUIRE(task != nullptr);
  const sandbox::Sizes sizes{{"rows", 5}, {"cols", 3001}};
  const Outputs out = run_variant(*task, "reference", sizes, Schedule::random(11));
  std::vector<float> x(5 * 3001);
  sandbox::detail::generate_inputs_on_host(sandbox::DType::float32, task->spec.params[0].generator, 1000, x.data(),
                                           x.size());
  for (std::size_t r = 0; r < 5; ++r) {
    double sum = 0;
    for (std::size_t c = 0; c < 3001; ++c) sum += x[r * 3001 + c];
    float got = 0;
    std::memcpy(&got, out.buffers[0].data() + r * sizeof(float), sizeof got);
    CHECK(std::abs(got - sum) <= 1e-3 + 1e-4 * std::abs(sum));
  }
}

}  // namespace
}  // namespace leap::cpu_runtime::test

// SPDX-License-Identifier: Apache-2.0
// The GPU runner's harness (run_evaluation: trials, device draws, poison, guards, comparisons, timing)
// on the device made of the CPU runtime (cpu_runtime_gpu.hpp), judging the shipped variants of built-in
// tasks against their real references: each must get the verdict it ships with, as step 4 of
// tests/gpu/run.sh expects on a GPU. Trusted sources only (the project's variants); candidates never
// run on the CPU runtime. The tasks run at their reduced timing sizes: the CPU runtime runs at host speed.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "cpu_runtime_gpu.hpp"
#include "evaluation/gpu_harness.hpp"
#include "evaluation/runner_reply.hpp"
#include "leap/sandbox/builtin_tasks.hpp"
#include "leap/sandbox/launch_plan.hpp"
#include "verify/module_cache.hpp"
#include "verify/reduced_sizes.hpp"

namespace {

namespace sb = leap::sandbox;
namespace vf = leap::sandbox::verify;
namespace dt = leap::sandbox::detail;
using leap::sandbox::test::CpuRuntimeGpu;

vf::ModuleCache& cache() {
  static vf::ModuleCache c(LEAP_VERIFY_TEST_CACHE);
  return c;
}

// The evaluation of `candidate` for `task` as the evaluator asks the runner for it (the candidate's own
// launch plan when it declares one), through the wire format both ways.
sb::EvalResult evaluate(dt::GpuDriver& gpu, const sb::TaskSpec& task, const std::string& candidate, bool time) {
  dt::EvaluationRequest request;
  request.task = sb::task_to_json(task);
  request.candidate = candidate;
  request.reference = task.reference_source;
  request.seed = 7;
  request.time = time;
  const sb::PlanParse plan = sb::parse_launch_plan(candidate);
  REQUIRE(plan.ok());
  if (!plan.plan.empty()) request.plan = sb::to_directives(plan.plan);
  const dt::EvaluationRequest sent = dt::evaluation_request_from_json(dt::to_json(request));
  const nlohmann::json reply = dt::to_json(dt::run_evaluation(sent, gpu, [](std::string_view) {}));
  sb::EvalResult result;
  dt::read_runner_reply(dt::evaluation_reply_from_json(reply), result);
  return result;
}

std::string verdict_of(const sb::EvalResult& r) {
  return r.verdict ? std::string(leap::to_string(*r.verdict))
                   : "status " + std::string(sb::to_string(r.status)) + ": " + r.error + " " + r.detail;
}

sb::TaskSpec reduced(const sb::BuiltinTask& t) {
  sb::TaskSpec spec = t.spec;
  spec.sizes = vf::reduced_timing_sizes(spec);
  return spec;
}

}  // namespace

TEST_CASE("harness on the CPU runtime: every shipped variant gets its verdict against the real reference",
          "[harness_cpu]") {
  // Every built-in task: every kind of signature (float and int scalars, int8 to float32, inouts, int32
  // outputs) and launch (the task's own, plans with several kernels and scratch, shared memory).
  std::vector<std::string> wrong;
  for (const sb::BuiltinTask& t : sb::builtin_tasks()) {
    const sb::TaskSpec spec = reduced(t);
    for (const sb::TaskVariant& v : t.variants) {
      if (v.expect == "compile_error") continue;  // NVRTC's verdict, given before any runner sees the source
      CpuRuntimeGpu gpu(cache());
      const sb::EvalResult r = evaluate(gpu, spec, v.source, false);
      if (verdict_of(r) != v.expect || gpu.live_allocations() != 0)
        wrong.push_back(t.spec.name + "/" + v.name + ": " + verdict_of(r) + " (expected " + v.expect + "); " +
                        r.detail + "; " + std::to_string(gpu.live_allocations()) + " allocations left");
    }
  }
  INFO([&] {
    std::string all;
    for (const std::string& w : wrong) all += w + "\n";
    return all;
  }());
  CHECK(wrong.empty());
}

TEST_CASE("harness on the CPU runtime: a timed evaluation of a correct variant gives a speedup", "[harness_cpu]") {
  const sb::BuiltinTask* t = sb::find_builtin_task("scale_add");
  REQUIRE(t != nullptr);
  sb::TaskSpec spec = reduced(*t);
  spec.timing.min_reps = 3;
  spec.timing.max_reps = 5;
  CpuRuntimeGpu gpu(cache());
  const sb::EvalResult r = evaluate(gpu, spec, t->variants.at(0).source, true);  // the reference against itself
  INFO(r.detail << " " << r.feedback << " " << r.timing_note);
  REQUIRE(verdict_of(r) == "correct");
  CHECK(r.speedup > 0);
  CHECK(r.candidate.runs >= 3);
  CHECK(r.reference.runs >= 3);
  CHECK(r.timing_evidence.checked_runs > 0);
  // The timed runs' inputs drawn, and their outputs compared, by the harness's own kernels.
  CHECK(gpu.harness_launches > 0);
  CHECK(gpu.live_allocations() == 0);
}

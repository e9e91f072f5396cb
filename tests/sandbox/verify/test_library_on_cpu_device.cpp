// SPDX-License-Identifier: Apache-2.0
// The whole task library through the GPU path on the device made of the CPU runtime
// (cpu_runtime_gpu.hpp), at the tasks' reduced timing sizes (the CPU runtime runs at host speed):
// - every built-in reference through `tasks measure`'s device half, agreeing with its oracle;
// - the GPU runner's harness (run_evaluation: trials, device draws, poison, guards, comparisons,
//   timing) judging every shipped variant against its real reference: each gets the verdict it ships
//   with, as step 4 of tests/gpu/run.sh expects on a GPU.
// Trusted sources only (the project's references and variants); candidates never run on the CPU runtime.
// A program of its own, kept out of leap_verify_tests' way: each of these processes loads some 250
// modules (why AddressSanitizer runs them without dynamic TLS tracking: ../CMakeLists.txt).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "device_test_support.hpp"
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

vf::ModuleCache& cache() { return leap::sandbox::test::verify_cache(); }

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

TEST_CASE("measure: every built-in reference runs through the device path and agrees with its oracle",
          "[measure][library]") {
  // Each task's signature (int and float scalars, int8 to float32 buffers, inouts, several outputs, shared
  // memory) through the arguments, copies and poison of the device path, at the reduced timing sizes,
  // with one timed run so the restored inouts are checked after it too.
  std::vector<std::string> failures;
  CpuRuntimeGpu gpu(cache());
  for (const sb::BuiltinTask& builtin : sb::builtin_tasks()) {
    vf::VerifyTarget t = leap::sandbox::test::small_task(builtin.spec.name);
    t.spec.timing.warmup = 0;
    t.spec.timing.min_reps = 1;
    t.spec.timing.max_reps = 1;
    const vf::MeasureReport r = leap::sandbox::test::measure_on_cpu_device(gpu, t);
    if (!r.ok()) failures.push_back(vf::to_text(r));
  }
  INFO([&] {
    std::string all;
    for (const std::string& f : failures) all += f;
    return all;
  }());
  CHECK(failures.empty());
  CHECK(gpu.live_allocations() == 0);
  CHECK(gpu.loaded_modules() == 0);
}

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

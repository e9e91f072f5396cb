// SPDX-License-Identifier: Apache-2.0
// The GPU suite's hostile kernels, compiled here on the CPU with the evaluator's own compile path:
// each compiles (or fails to compile) as its expected verdict needs, so a case cannot drift into
// failing for an unrelated reason unnoticed. The modules that call the device heap are the ones the
// evaluator replaces its runner after.
#include <catch2/catch.hpp>
#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/evaluator.hpp>
#include <string>

#include "../../gpu/hostile_cases.hpp"
#include "evaluation/runner_reply.hpp"

namespace sb = leap::sandbox;

TEST_CASE("hostile suite: every case compiles, or fails to compile, as its verdict needs", "[sandbox][hostile]") {
  sb::EvaluatorConfig c;
  c.gpu = sb::GpuStatus{sb::GpuState::no_driver, 0, {}, "no GPU on this machine"};
  c.arch = "sm_90a";  // what the H100/H200 compiles for (compile_target.hpp); clusters need sm_90 or later
  sb::Evaluator ev(c);
  const sb::TaskSpec task = sb::find_builtin_task("scale_add")->spec;
  for (const sb::hostile::Case& hc : sb::hostile::cases()) {
    INFO(hc.name);
    const sb::EvalResult r = ev.evaluate(task, hc.source);
    if (hc.expect == "compile_error") {
      REQUIRE(r.verdict.has_value());
      CHECK(*r.verdict == leap::Verdict::compile_error);
    } else {
      INFO(r.detail);
      CHECK(r.status == sb::EvalStatus::no_gpu);
      CHECK(sb::detail::references_device_malloc(r.compile.ptx) == hc.uses_malloc);
      if (hc.name == "huge per-thread local memory") CHECK(r.compile.ptx.find(".local .align") != std::string::npos);
    }
  }
}

TEST_CASE("hostile suite: the compile errors are the intended ones", "[sandbox][hostile]") {
  sb::EvaluatorConfig c;
  c.gpu = sb::GpuStatus{sb::GpuState::no_driver, 0, {}, "no GPU on this machine"};
  c.arch = "sm_90";
  sb::Evaluator ev(c);
  for (const sb::hostile::Case& hc : sb::hostile::cases()) {
    if (hc.expect != "compile_error") continue;
    const sb::CompileResult r = ev.compile(hc.source);
    INFO(hc.name << "\n" << r.log);
    REQUIRE_FALSE(r.ok());
    if (hc.name.find("from the device") != std::string::npos)
      CHECK(r.log.find("device-side kernel launch") != std::string::npos);
  }
}

TEST_CASE("hostile suite: every launch-plan case compiles, and is refused before running exactly when it should",
          "[sandbox][hostile][plan]") {
  sb::EvaluatorConfig c;
  c.gpu = sb::GpuStatus{sb::GpuState::no_driver, 0, {}, "no GPU on this machine"};
  c.arch = "sm_90";
  sb::Evaluator ev(c);
  for (const sb::hostile::PlanCase& pc : sb::hostile::plan_cases()) {
    INFO(pc.name);
    const sb::EvalResult r = ev.evaluate(sb::find_builtin_task(pc.task)->spec, pc.source);
    INFO(r.detail);
    REQUIRE(r.compile.ok());  // never a compile error: what is refused is the plan
    REQUIRE(r.launch_plan.has_value());
    CHECK(r.launch_plan->source == sb::PlanSource::candidate);
    if (pc.expect == "compile_error") {
      REQUIRE(r.verdict.has_value());
      CHECK(*r.verdict == leap::Verdict::compile_error);
      CHECK(r.launch_plan->status == sb::PlanStatus::invalid);
    } else {
      CHECK(r.status == sb::EvalStatus::no_gpu);
      CHECK(r.launch_plan->status == sb::PlanStatus::ok);
    }
  }
}

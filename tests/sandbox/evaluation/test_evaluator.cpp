// SPDX-License-Identifier: Apache-2.0
// Evaluations without a GPU: compile verdicts are real, a compiling candidate gets no_gpu and no
// verdict, and a broken harness is an error, never a made-up verdict.
#include <catch2/catch.hpp>
#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/evaluator.hpp>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace sb = leap::sandbox;
using leap_test::no_gpu_config;
using nlohmann::json;

namespace {

const sb::BuiltinTask& task(const char* name) {
  const sb::BuiltinTask* t = sb::find_builtin_task(name);
  REQUIRE(t != nullptr);
  return *t;
}

}  // namespace

TEST_CASE("evaluator: no GPU - compile errors are verdicts, compiling candidates are no_gpu", "[sandbox][evaluator]") {
  sb::Evaluator ev(no_gpu_config());
  const sb::BuiltinTask& t = task("softmax");
  const sb::EvalResult broken = ev.evaluate(t.spec, t.variant("broken")->source);
  CHECK(broken.status == sb::EvalStatus::verdict);
  REQUIRE(broken.verdict.has_value());
  CHECK(*broken.verdict == leap::Verdict::compile_error);
  CHECK_THAT(broken.feedback, Catch::StartsWith("Compile error:") && Catch::Contains("error"));
  CHECK(broken.feedback.size() < 2000);

  const sb::EvalResult fast = ev.evaluate(t.spec, t.variant("fast")->source);
  CHECK(fast.status == sb::EvalStatus::no_gpu);
  CHECK_FALSE(fast.verdict.has_value());
  CHECK(std::isnan(fast.speedup));
  CHECK_THAT(fast.detail, Catch::Contains("needs a GPU"));
  const json j = json::parse(sb::to_json(fast));
  CHECK(j.at("status") == "no_gpu");
  CHECK(j.at("verdict").is_null());
  CHECK(j.at("speedup").is_null());
  CHECK(j.at("compile").at("status") == "ok");
}

TEST_CASE("evaluator: a missing entry point, a refused include and a compile bomb are compile errors",
          "[sandbox][evaluator]") {
  sb::EvaluatorConfig c = no_gpu_config();
  c.compile_timeout = std::chrono::milliseconds(3000);
  sb::Evaluator ev(c);
  const sb::TaskSpec& spec = task("scale_add").spec;
  const sb::EvalResult no_entry =
      ev.evaluate(spec, "__global__ void scale_add(const float* x, const float* y, float* out, float a, int n) {}\n");
  REQUIRE(no_entry.verdict.has_value());
  CHECK(*no_entry.verdict == leap::Verdict::compile_error);
  CHECK_THAT(no_entry.feedback, Catch::Contains("extern \"C\" __global__ void scale_add"));
  const sb::EvalResult refused = ev.evaluate(spec, "#include \"/etc/passwd\"\n");
  REQUIRE(refused.verdict.has_value());
  CHECK(*refused.verdict == leap::Verdict::compile_error);
  CHECK(refused.compile.status == sb::CompileStatus::refused);
  CHECK(refused.feedback.find("root:") == std::string::npos);
}

TEST_CASE("evaluator: a harness that cannot run kernels reports an error, not a verdict", "[sandbox][evaluator]") {
  sb::EvaluatorConfig c;
  c.gpu = sb::GpuStatus{sb::GpuState::available, 13000, {sb::DeviceInfo{0, "pretend", 9, 0, 0}}, ""};
  c.gpu_runner.fake = true;  // a runner without CUDA: it must not be mistaken for a verdict
  sb::Evaluator ev(c);
  CHECK(ev.arch() == "sm_90a");  // a 9.0 device compiles for its architecture-specific target
  const sb::BuiltinTask& t = task("row_sum");
  const sb::EvalResult r = ev.evaluate(t.spec, t.variant("fast")->source);
  CHECK(r.status == sb::EvalStatus::error);
  CHECK_FALSE(r.verdict.has_value());
  CHECK_THAT(r.error, Catch::Contains("fake runner"));
  // The compile verdict still works with a broken runner.
  const sb::EvalResult broken = ev.evaluate(t.spec, t.variant("broken")->source);
  CHECK(broken.status == sb::EvalStatus::verdict);
}

TEST_CASE("evaluator: a task whose reference does not compile is the harness's error", "[sandbox][evaluator]") {
  sb::Evaluator ev(no_gpu_config());
  sb::TaskSpec spec = task("scale_add").spec;
  spec.reference_source = "this is not CUDA";
  const sb::EvalResult r = ev.evaluate(spec, task("scale_add").variant("fast")->source);
  CHECK(r.status == sb::EvalStatus::error);
  CHECK_THAT(r.error, Catch::Contains("reference"));
}

TEST_CASE("evaluator: a reference compile ended by a limit is not kept, and the next evaluation compiles it again",
          "[sandbox][evaluator]") {
  // One compile cache for two evaluators: `roomy` with the usual limit, `tight` with a limit no real
  // compile fits in. The candidate comes from the cache, so only tight's reference compile hits the
  // limit. Once the reference can be compiled (the cache holds it), tight must compile it again and
  // not answer from the failure it had before.
  auto cache = std::make_shared<sb::CompileCache>(leap_test::cache_options(std::size_t{64} << 20));
  sb::EvaluatorConfig roomy_config = no_gpu_config();
  roomy_config.compiler.cache = cache;
  sb::EvaluatorConfig tight_config = roomy_config;
  tight_config.compile_timeout = std::chrono::milliseconds(1);
  sb::Evaluator roomy(roomy_config), tight(tight_config);
  const sb::BuiltinTask& t = task("scale_add");
  const std::string candidate = t.variant("fast")->source;
  REQUIRE(roomy.compile(candidate).ok());

  const sb::EvalResult first = tight.evaluate(t.spec, candidate);
  INFO(first.error);
  REQUIRE(first.compile.cache_hit);
  REQUIRE(first.status == sb::EvalStatus::error);
  CHECK_THAT(first.error, Catch::Contains("reference"));

  REQUIRE(roomy.evaluate(t.spec, candidate).status == sb::EvalStatus::no_gpu);  // leaves the reference in the cache
  const sb::EvalResult second = tight.evaluate(t.spec, candidate);
  INFO(second.error);
  CHECK(second.status == sb::EvalStatus::no_gpu);
  CHECK(second.error.empty());
  // A reference that really does not compile stays an error, every time.
  sb::TaskSpec broken = t.spec;
  broken.reference_source = "this is not CUDA";
  REQUIRE(roomy.evaluate(broken, candidate).status == sb::EvalStatus::error);
  CHECK(roomy.evaluate(broken, candidate).status == sb::EvalStatus::error);
}

TEST_CASE("evaluator: first_errors keeps the diagnostics and their carets", "[sandbox][evaluator]") {
  const std::string log =
      "k.cu(3): error: identifier \"x\" is undefined\n  y = x;\n      ^\n\nk.cu(9): warning: unused\n1 error "
      "detected\n";
  const std::string e = sb::first_errors(log);
  CHECK_THAT(e, Catch::Contains("k.cu(3): error") && Catch::Contains("y = x;"));
  CHECK(e.find("warning") == std::string::npos);
}

TEST_CASE("evaluator: a task's compile_cpu_seconds raises the compile limit for its candidates and reference",
          "[sandbox][evaluator]") {
  sb::EvaluatorConfig c = no_gpu_config();
  c.compile_timeout = std::chrono::milliseconds(1);  // no compile finishes in a millisecond of CPU
  sb::Evaluator ev(c);
  sb::TaskSpec spec = task("scale_add").spec;
  const std::string fast = task("scale_add").variant("fast")->source;
  const sb::EvalResult starved = ev.evaluate(spec, fast);
  REQUIRE(starved.verdict.has_value());
  CHECK(*starved.verdict == leap::Verdict::compile_error);
  CHECK(starved.compile.status == sb::CompileStatus::timeout);

  spec.library.compile_cpu_seconds = 60;  // what a tensor-core GEMM task declares
  spec.name = "scale_add_roomy";          // its reference is compiled afresh under the task's limit
  const sb::EvalResult roomy = ev.evaluate(spec, fast + "// another source, not a cache hit\n");
  INFO(roomy.detail << roomy.error);
  CHECK(roomy.compile.status == sb::CompileStatus::ok);
  CHECK(roomy.status == sb::EvalStatus::no_gpu);  // the reference compiled too, or this would be an error
}

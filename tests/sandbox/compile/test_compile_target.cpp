// SPDX-License-Identifier: Apache-2.0
// Architecture-specific targets (compile_target.hpp): a device from compute capability 9.0 on
// compiles candidates for its sm_XYa, so a Hopper tensor-core kernel (wgmma) compiles, while the
// plain sm_90 refuses it with a message that names the target it needs. Real NVRTC, no GPU.
#include <algorithm>
#include <catch2/catch.hpp>
#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/compile_target.hpp>
#include <leap/sandbox/compiler.hpp>
#include <leap/sandbox/evaluator.hpp>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace sb = leap::sandbox;

namespace {

// A warpgroup fence and register-count hint: instructions of sm_90a that sm_90 lacks.
const std::string k_wgmma_kernel =
    "extern \"C\" __global__ void scale_add(const float* x, const float* y, float* out, float alpha, int n) {\n"
    "  asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
    "  asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\");\n"
    "  asm volatile(\"wgmma.wait_group.sync.aligned 0;\\n\" ::: \"memory\");\n"
    "  const long long base = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) * 4;\n"
    "  for (int k = 0; k < 4; ++k) { long long i = base + k; if (i < n) out[i] = alpha * x[i] + y[i]; }\n"
    "}\n";

}  // namespace

TEST_CASE("compile target: the device's architecture-specific target where it has one", "[sandbox][compile]") {
  const std::vector<int> supported = {75, 80, 86, 87, 89, 90, 100, 103, 110, 120, 121};
  CHECK(sb::device_compile_target(9, 0, supported) == "sm_90a");
  CHECK(sb::device_compile_target(10, 0, supported) == "sm_100a");
  CHECK(sb::device_compile_target(10, 3, supported) == "sm_103a");
  CHECK(sb::device_compile_target(12, 1, supported) == "sm_121a");
  CHECK(sb::device_compile_target(8, 9, supported) == "sm_89");  // before Hopper: no `a` target
  CHECK(sb::device_compile_target(8, 0, supported) == "sm_80");
  CHECK(sb::device_compile_target(10, 1, supported) == "sm_101");  // a number this NVRTC does not list
  // This NVRTC: every supported number from 90 on gets its `a` target, and accepts it.
  const std::vector<int> archs = sb::supported_archs();
  REQUIRE(std::find(archs.begin(), archs.end(), 90) != archs.end());
  CHECK(sb::device_compile_target(9, 0) == "sm_90a");
  sb::CompileOptions o;
  o.arch = sb::device_compile_target(9, 0);
  CHECK_NOTHROW(sb::validate(o));
}

TEST_CASE("compile target: a wgmma kernel compiles for sm_90a and is refused for sm_90, saying what it needs",
          "[sandbox][compile]") {
  const sb::CompileResult a = leap_test::compile_trusted(k_wgmma_kernel, "sm_90a");
  INFO(a.log);
  CHECK(a.status == sb::CompileStatus::ok);
  CHECK(a.ptx.find(".target sm_90a") != std::string::npos);
  CHECK(a.ptx.find("wgmma.fence.sync.aligned") != std::string::npos);
  CHECK_FALSE(a.cubin.empty());

  const sb::CompileResult plain = leap_test::compile_trusted(k_wgmma_kernel, "sm_90");
  INFO(plain.log);
  CHECK(plain.status == sb::CompileStatus::error);
  CHECK_THAT(plain.log, Catch::Contains("not supported on .target 'sm_90'"));
  const std::string advice = sb::arch_specific_advice(plain.log, "sm_90");
  CHECK_THAT(advice, Catch::Contains("'wgmma."));
  CHECK_THAT(advice, Catch::Contains("exists only on the architecture-specific target sm_90a, not on sm_90"));
  CHECK_THAT(advice, Catch::Contains("--arch sm_90a"));
  // Nothing to say for other logs, or for a target that has no `a` variant.
  CHECK(sb::arch_specific_advice("error: expected a ';'", "sm_90").empty());
  CHECK(sb::arch_specific_advice(plain.log, "sm_90a").empty());
  CHECK(sb::arch_specific_advice("Instruction 'x' not supported on .target 'sm_80'", "sm_80").empty());
}

TEST_CASE("compile target: sm_90 and sm_90a are cached apart, and an evaluation for sm_90 says what to do",
          "[sandbox][compile][evaluator]") {
  auto cache = std::make_shared<sb::CompileCache>(leap_test::cache_options(std::size_t{64} << 20));
  sb::Compiler compiler(leap_test::config(sb::Isolation::trusted_in_process, 1, cache));
  sb::CompileJob job;
  job.source = k_wgmma_kernel;
  job.options.arch = "sm_90a";
  REQUIRE(compiler.compile(job).ok());
  job.options.arch = "sm_90";
  const sb::CompileResult plain = compiler.compile(job);
  CHECK_FALSE(plain.cache_hit);  // the key holds the arch: sm_90a's success is not sm_90's
  CHECK_FALSE(plain.ok());
  job.options.arch = "sm_90a";
  const sb::CompileResult again = compiler.compile(job);
  CHECK(again.cache_hit);
  CHECK(again.ok());

  // The evaluator's feedback for a candidate compiled for sm_90 names sm_90a.
  sb::EvaluatorConfig c = leap_test::no_gpu_config();
  c.compiler.isolation = sb::Isolation::trusted_in_process;
  c.arch = "sm_90";
  sb::Evaluator ev(c);
  const sb::EvalResult r = ev.evaluate(sb::find_builtin_task("scale_add")->spec, k_wgmma_kernel);
  REQUIRE(r.verdict.has_value());
  CHECK(*r.verdict == leap::Verdict::compile_error);
  CHECK_THAT(r.feedback, Catch::Contains("sm_90a"));

  // Without a GPU the default target stays sm_90; with a 9.0 device it is sm_90a (test_evaluator).
  sb::Evaluator no_gpu(leap_test::no_gpu_config());
  CHECK(no_gpu.arch() == "sm_90");
}

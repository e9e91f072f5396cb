// SPDX-License-Identifier: Apache-2.0
// What a compile may produce: a small source that expands to a huge PTX, CUBIN or kernel list is a
// `resource_limit` result with limit `output_size` and a log that names the limit, refused in the
// process that compiled it (one-shot child, pooled compiler or in process), never cached, and never
// served from a cache that a Compiler with larger limits filled. Serve's response and eval's feedback
// say the same, in a few hundred bytes.
#include <catch2/catch.hpp>
#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/compiler.hpp>
#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/request_handler.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "test_support.hpp"

namespace sb = leap::sandbox;
using nlohmann::json;

namespace {

// 100 bytes of source, 4 MB of CUBIN (the initialiser's zeros are written out in the module's data).
const char* k_big_cubin =
    "__device__ int table[1 << 20] = {1};\n"
    "extern \"C\" __global__ void k(int* x) { x[threadIdx.x] = table[x[0]]; }\n";
// 200 bytes of source, 1 MB of PTX (every element of a constexpr-built table written out).
const char* k_big_ptx =
    "struct T { int v[1 << 16]; __host__ __device__ constexpr T() : v() { for (int i = 0; i < (1 << 16); ++i) "
    "v[i] = i * 7 + 1; } };\n"
    "__device__ T t;\n"
    "extern \"C\" __global__ void k(int* x) { x[threadIdx.x] = t.v[x[0]]; }\n";
// 64 kernels from one template, instantiated through a table of their addresses.
const char* k_many_kernels =
    "template <int N> __global__ void kernel_with_a_rather_long_name_to_list(float* x) { x[threadIdx.x] += N; }\n"
    "template <int L, int H> struct R { __device__ static void* get(int i) { return i < (L + H) / 2 ? "
    "R<L, (L + H) / 2>::get(i) : R<(L + H) / 2, H>::get(i); } };\n"
    "template <int L> struct R<L, L + 1> { __device__ static void* get(int) { return "
    "(void*)&kernel_with_a_rather_long_name_to_list<L>; } };\n"
    "extern \"C\" __global__ void entry(void** out, int i) { out[0] = R<0, 64>::get(i); }\n";

sb::CompilerConfig limited(sb::Isolation isolation, std::shared_ptr<sb::CompileCache> cache = {}) {
  sb::CompilerConfig c = leap_test::config(isolation, 1, std::move(cache));
  c.pool.size = 1;
  c.output.max_ptx_bytes = 256u << 10;
  c.output.max_cubin_bytes = 1u << 20;
  c.output.max_kernels = 16;
  return c;
}

sb::CompileJob job_of(const std::string& source) {
  sb::CompileJob j;
  j.source = source;
  j.options.arch = "sm_80";
  j.options.timeout = std::chrono::seconds(60);  // a loaded machine: the output limit must be what ends it
  return j;
}

void check_refused(const sb::CompileResult& r, const std::string& field) {
  INFO(r.log);
  CHECK(r.status == sb::CompileStatus::resource_limit);
  CHECK(r.limit == sb::CompileLimit::output_size);
  CHECK(r.log.starts_with("compile refused at its output limit: "));
  CHECK(r.log.find("(OutputLimits::" + field + ")") != std::string::npos);
  CHECK(r.ptx.empty());
  CHECK(r.cubin.empty());
  CHECK_FALSE(r.kernels.has_value());
  CHECK_FALSE(r.nvrtc_verdict);
  const json j = json::parse(sb::to_json(r));
  CHECK(j.at("limit") == "output_size");
  CHECK(j.at("kernels").is_null());
}

}  // namespace

TEST_CASE("output limits: a small source that expands to a huge module is refused where it was compiled",
          "[sandbox][compile][output_limits]") {
  leap_test::require_confinement();
  for (const sb::Isolation isolation :
       {sb::Isolation::process, sb::Isolation::pooled, sb::Isolation::trusted_in_process}) {
    INFO("isolation " << static_cast<int>(isolation));
    auto cache = std::make_shared<sb::CompileCache>(leap_test::cache_options(256u << 20));
    sb::Compiler compiler(limited(isolation, cache));
    const sb::CompileResult cubin = compiler.compile(job_of(k_big_cubin));
    check_refused(cubin, "max_cubin_bytes");
    CHECK(cubin.log.find("the compiled CUBIN is ") != std::string::npos);
    const sb::CompileResult ptx = compiler.compile(job_of(k_big_ptx));
    check_refused(ptx, "max_ptx_bytes");
    const sb::CompileResult kernels = compiler.compile(job_of(k_many_kernels));
    check_refused(kernels, "max_kernels");
    CHECK(kernels.log.find("the module defines 65 kernels, over the limit of 16") != std::string::npos);
    // Never cached: the same source compiles again (and is refused again), nothing was stored.
    CHECK_FALSE(compiler.compile(job_of(k_big_cubin)).cache_hit);
    CHECK(cache->stats().stores == 0);
    // A pooled compiler that refused an output is not at fault: it stays.
    CHECK(compiler.pool_stats().processes_replaced == 0);
    // And an honest kernel still compiles, with its kernels listed.
    const sb::CompileResult ok = compiler.compile(job_of(leap_test::plain_kernel()));
    REQUIRE(ok.ok());
    CHECK(ok.kernels == std::vector<std::string>{"scale"});
  }
}

TEST_CASE("output limits: the kernel names' total length is a limit of its own", "[sandbox][compile][output_limits]") {
  sb::CompilerConfig c = leap_test::config(sb::Isolation::trusted_in_process, 1);
  c.output.max_kernel_name_bytes = 1024;  // 65 names of about 50 bytes
  sb::Compiler compiler(c);
  const sb::CompileResult r = compiler.compile(job_of(k_many_kernels));
  check_refused(r, "max_kernel_name_bytes");
  CHECK(r.log.find("the names of the module's kernels take ") != std::string::npos);
}

// The amplification at the default limits: 100 bytes that NVRTC turns into 21 MB of CUBIN
// (the issue's own 809 bytes gave 33 MB of PTX and 82 MB of CUBIN, a 115 MB cache entry), through
// serve's request handler (a pooled compiler) and eval.
TEST_CASE("output limits: the defaults refuse a 100-byte source's 21 MB CUBIN, and serve says so in a short response",
          "[sandbox][compile][output_limits]") {
  leap_test::require_confinement();
  std::string source = k_big_cubin;
  source.replace(source.find("1 << 20"), 7, "5 << 20");
  sb::EvaluatorConfig config = leap_test::no_gpu_config();
  config.compiler.isolation = sb::Isolation::pooled;
  config.compiler.pool.size = 1;
  config.compile_timeout = std::chrono::seconds(60);
  sb::Evaluator evaluator(config);
  const sb::RequestHandler handler(evaluator);
  const std::string response = handler.handle(json{{"id", 1}, {"op", "compile"}, {"source", source}}.dump());
  CHECK(response.size() < 2048);
  const json j = json::parse(response).at("result");
  INFO(j.dump());
  CHECK(j.at("log").get<std::string>().starts_with(
      "compile refused at its output limit: the compiled CUBIN is 2097"));  // 20 971 520 and a little
  CHECK(j.at("log").get<std::string>().find("over the limit of 16777216 (OutputLimits::max_cubin_bytes)") !=
        std::string::npos);
  CHECK(j.at("status") == "resource_limit");
  CHECK(j.at("limit") == "output_size");
  CHECK(j.at("cubin_bytes") == 0);
  CHECK_FALSE(j.contains("advice"));

  // eval: a compile error whose feedback names the limit.
  const sb::EvalResult e = evaluator.evaluate(sb::find_builtin_task("scale_add")->spec, source);
  CHECK(e.verdict == leap::Verdict::compile_error);
  CHECK(e.detail.starts_with("compile refused at its output limit: the compiled CUBIN is "));
  CHECK(e.feedback.find("OutputLimits::max_cubin_bytes") != std::string::npos);
}

TEST_CASE("output limits: a cached module larger than this Compiler allows is refused, not served",
          "[sandbox][compile][output_limits]") {
  auto cache = std::make_shared<sb::CompileCache>(leap_test::cache_options(256u << 20));
  sb::Compiler generous(leap_test::config(sb::Isolation::trusted_in_process, 1, cache));
  const sb::CompileResult stored = generous.compile(job_of(k_big_cubin));
  REQUIRE(stored.ok());
  CHECK(stored.cubin.size() > (4u << 20));
  REQUIRE(cache->stats().stores == 1);
  sb::Compiler strict(limited(sb::Isolation::trusted_in_process, cache));
  const sb::CompileResult r = strict.compile(job_of(k_big_cubin));
  CHECK(r.cache_hit);
  check_refused(r, "max_cubin_bytes");
}

TEST_CASE("output limits: a limit of zero is misuse, named", "[sandbox][compile][output_limits]") {
  sb::CompilerConfig c = leap_test::config(sb::Isolation::trusted_in_process, 1);
  c.output.max_kernels = 0;
  CHECK_THROWS_WITH(sb::Compiler(c), Catch::Contains("CompilerConfig::output.max_kernels = 0"));
}

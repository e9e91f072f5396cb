// SPDX-License-Identifier: Apache-2.0
// Kernels are found by their symbols in the CUBIN's ELF symbol table: a compile result lists them,
// eval names what is missing, and no text in the PTX can fake an entry.
#include <catch2/catch.hpp>
#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/compiler.hpp>
#include <leap/sandbox/evaluator.hpp>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "compile/elf_kernels.hpp"
#include "test_support.hpp"

namespace sb = leap::sandbox;
using leap_test::no_gpu_config;
using nlohmann::json;
using Names = std::vector<std::string>;

namespace {

sb::CompileResult compile(const std::string& source) { return leap_test::compile_trusted(source, "sm_80"); }

const char* k_module = R"(
__device__ __noinline__ float helper(float x) { return x * 2.0f + __sinf(x); }
extern "C" __global__ void softmax(float* y) { y[threadIdx.x] = helper(y[threadIdx.x]); }
template <int N> __global__ void tk(float* y) { y[N] = 1; }
template __global__ void tk<3>(float*);
__global__ void mangled(int* p) { p[0] = 1; }
template <int N> __global__ void never(float* y) { y[N] = 1; }
)";

}  // namespace

TEST_CASE("kernels: the compile result lists every kernel by symbol, and nothing else", "[sandbox][kernels]") {
  const sb::CompileResult r = compile(k_module);
  REQUIRE(r.ok());
  REQUIRE(r.kernels.has_value());
  // extern "C" by its name, C++ kernels by their mangled names (what cuModuleGetFunction takes); the
  // device function and the template never instantiated are not kernels.
  CHECK(*r.kernels == Names{"_Z2tkILi3EEvPf", "_Z7mangledPi", "softmax"});

  const sb::CompileResult none = compile("template <int N> __global__ void softmax(float* y) { y[N] = 1; }\n");
  REQUIRE(none.ok());
  REQUIRE(none.kernels.has_value());
  CHECK(none.kernels->empty());

  // No CUBIN (PTX only): the list is unknown, not empty.
  sb::Compiler c(leap_test::config(sb::Isolation::trusted_in_process, 1));
  sb::CompileJob ptx_only;
  ptx_only.source = k_module;
  ptx_only.options.arch = "compute_80";
  CHECK_FALSE(c.compile(ptx_only).kernels.has_value());
}

TEST_CASE("kernels: eval refuses a missing entry by the symbol table, never by PTX text", "[sandbox][kernels]") {
  sb::Evaluator ev(no_gpu_config());
  const sb::TaskSpec& spec = sb::find_builtin_task("scale_add")->spec;
  // An inline-asm comment that puts ".entry scale_add(" into the PTX text.
  const std::string faked =
      "extern \"C\" __global__ void other(float* p) { asm volatile(\"// .entry scale_add(\"); p[0] = 1; }\n";
  const sb::CompileResult compiled = ev.compile(faked);
  REQUIRE(compiled.ok());
  REQUIRE(compiled.ptx.find(".entry scale_add(") != std::string::npos);  // the text is there ...
  const sb::EvalResult r = ev.evaluate(spec, faked);
  REQUIRE(r.verdict.has_value());
  CHECK(*r.verdict == leap::Verdict::compile_error);  // ... and proves nothing
  CHECK_THAT(r.detail, Catch::Contains("defines no kernel named 'scale_add'") && Catch::Contains("it defines other"));

  const sb::EvalResult templ = ev.evaluate(spec,
                                           "template <int N> __global__ void scale_add(const float* x, const float* y, "
                                           "float* out, float a, int n) { out[N] = x[N] + a * y[N]; }\n");
  REQUIRE(templ.verdict.has_value());
  CHECK(*templ.verdict == leap::Verdict::compile_error);
  CHECK_THAT(templ.detail, Catch::Contains("defines no kernel named 'scale_add'") && Catch::Contains("is a template"));

  const sb::EvalResult good = ev.evaluate(spec, sb::find_builtin_task("scale_add")->variant("reference")->source);
  CHECK(good.status == sb::EvalStatus::no_gpu);
  const json j = json::parse(sb::to_json(good));
  CHECK(j.at("compile").at("kernels") == json::array({"scale_add"}));
}

TEST_CASE("kernels: the ELF reader survives every truncation and random corruption of a real CUBIN",
          "[sandbox][kernels]") {
  const sb::CompileResult r = compile(k_module);
  REQUIRE(!r.cubin.empty());
  const std::string cubin = r.cubin;
  CHECK(sb::detail::cubin_kernels(cubin) == Names{"_Z2tkILi3EEvPf", "_Z7mangledPi", "softmax"});
  CHECK_FALSE(sb::detail::cubin_kernels("").has_value());
  CHECK_FALSE(
      sb::detail::cubin_kernels("not an elf file at all, but long enough to hold a header ...........").has_value());
  for (std::size_t n = 0; n < cubin.size(); n += 7)
    (void)sb::detail::cubin_kernels(std::string_view(cubin).substr(0, n));
  std::mt19937 rng(12345);
  int still_read = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bad = cubin;
    for (int k = 0; k < 4; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    still_read += sb::detail::cubin_kernels(bad).has_value() ? 1 : 0;
  }
  CHECK(still_read > 0);  // most flips land in code, which the reader does not look at
  // A section header table pointing past the end, and a huge section count.
  std::string far = cubin;
  far[0x28 + 7] = '\x7f';
  CHECK_FALSE(sb::detail::cubin_kernels(far).has_value());
  std::string many = cubin;
  many[0x3C] = '\xff';
  many[0x3D] = '\xfe';
  CHECK_FALSE(sb::detail::cubin_kernels(many).has_value());
}

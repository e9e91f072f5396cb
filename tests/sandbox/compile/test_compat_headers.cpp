// SPDX-License-Identifier: Apache-2.0
// The NVRTC compatibility layer, header by header: a kernel that includes the header and uses what it
// promises compiles, and the values are right (static_assert inside device code, so a wrong constant
// is a compile error here, not a silent difference on a GPU).
#include <catch2/catch.hpp>
#include "compile/compat_headers.hpp"
#include <leap/sandbox/compiler.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace leap::sandbox;

namespace {

Compiler& compiler() {
  static Compiler c(leap_test::config(Isolation::trusted_in_process, 2));
  return c;
}

CompileJob job_of(const std::string& source, int cxx_standard = 17) {
  CompileJob j;
  j.source = source;
  j.options.cxx_standard = cxx_standard;
  j.options.want_cubin = false;
  j.options.timeout = std::chrono::seconds(120);  // libcu++ headers take seconds on a busy 2-core machine
  return j;
}

CompileResult compile(const std::string& source, int cxx_standard = 17) {
  return compiler().compile(job_of(source, cxx_standard));
}

struct HeaderCase {
  const char* includes;  // the #include lines
  const char* body;      // statements inside `extern "C" __global__ void k(float* f, double* d, int* i)`
  int min_standard;      // the oldest C++ standard the header serves
};

// One case per header; the C forms and the C++ forms are both checked.
const std::vector<HeaderCase>& cases() {
  static const std::vector<HeaderCase> all = {
      {"#include <cstdint>\n",
       "static_assert(sizeof(std::int64_t) == 8 && sizeof(std::uint8_t) == 1 && sizeof(uintptr_t) == 8, \"widths\");\n"
       "static_assert(INT64_MAX == 9223372036854775807LL && UINT32_MAX == 4294967295U && INT8_MIN == -128, "
       "\"limits\");\n"
       "static_assert(SIZE_MAX == 18446744073709551615ULL, \"SIZE_MAX\");\n"
       "std::int64_t big = INT64_C(1) << 40; i[0] = static_cast<int>(big >> 38);",
       11},
      {"#include <stdint.h>\n", "int32_t a = INT32_MAX; uint16_t b = UINT16_MAX; i[0] = a - b;", 11},
      {"#include <climits>\n",
       "static_assert(CHAR_BIT == 8 && INT_MAX == 2147483647 && INT_MIN == -INT_MAX - 1, \"int\");\n"
       "static_assert(LLONG_MAX == 9223372036854775807LL && UINT_MAX == 4294967295U && SHRT_MAX == 32767, \"more\");\n"
       "i[0] = INT_MAX;",
       11},
      {"#include <limits.h>\n", "i[0] = UCHAR_MAX + SCHAR_MIN;", 11},
      {"#include <cfloat>\n",
       "static_assert(FLT_MAX == 3.402823466e+38f && FLT_MIN == 1.175494351e-38f, \"float range\");\n"
       "static_assert(FLT_EPSILON == 1.192092896e-07f && 1.0f + FLT_EPSILON != 1.0f, \"float epsilon\");\n"
       "static_assert(DBL_MAX == 1.7976931348623157e+308 && DBL_EPSILON == 2.220446049250313e-16, \"double\");\n"
       "static_assert(FLT_MANT_DIG == 24 && DBL_MANT_DIG == 53 && FLT_MAX_EXP == 128, \"digits\");\n"
       "f[0] = -FLT_MAX;",
       11},
      {"#include <float.h>\n", "d[0] = DBL_MAX; f[0] = FLT_TRUE_MIN;", 11},
      {"#include <cmath>\n",
       "constexpr float inf = INFINITY; constexpr float nan = NAN;\n"
       "static_assert(inf > 3.402823466e+38f && -inf < -3.402823466e+38f, \"INFINITY\");\n"
       "static_assert(nan != nan, \"NAN is a NaN\");\n"
       "static_assert(M_PI > 3.14159265358979 && M_PI < 3.1415926535898, \"M_PI\");\n"
       "static_assert(M_SQRT2 * M_SQRT2 > 1.9999999999 && M_E > 2.718281828 && M_LN2 < 0.6931471806, \"M_*\");\n"
       "f[0] = std::sqrt(f[1]) + std::exp(f[2]) + std::fabs(f[3]) + std::fmax(f[4], -INFINITY) + std::tanh(f[5]);\n"
       "d[0] = std::log(d[1]) + std::pow(d[2], 2.0) + std::floor(d[3]) + HUGE_VAL;\n"
       "i[0] = std::isnan(f[6]) + std::isinf(f[7]) + std::abs(i[1]);",
       11},
      {"#include <math.h>\n", "f[0] = fmaxf(f[1], -INFINITY) + sqrtf(f[2]) + (float)M_PI + HUGE_VALF;", 11},
      {"#include <cstdio>\n", "std::printf(\"%d %f\\n\", i[0], f[0]); printf(\"%s\\n\", \"device\");", 11},
      {"#include <stdio.h>\n", "printf(\"thread %d\\n\", (int)threadIdx.x);", 11},
      {"#include <cassert>\n", "assert(i[0] >= 0); f[0] = 1.0f;", 11},
      {"#define NDEBUG\n#include <assert.h>\n", "assert(i[0] >= 0 && \"never evaluated\"); f[0] = 1.0f;", 11},
      {"#include <cstddef>\n",
       "struct S { int a; float b; };\n"
       "static_assert(offsetof(S, b) == 4 && sizeof(std::size_t) == 8 && alignof(std::max_align_t) >= 8, "
       "\"cstddef\");\n"
       "std::ptrdiff_t n = &f[4] - &f[0]; std::nullptr_t none = nullptr; (void)none; i[0] = static_cast<int>(n);",
       11},
      {"#include <cstddef>\n", "std::byte b{0x2a}; i[0] = std::to_integer<int>(b);", 17},
      {"#include <cstdlib>\n",
       "int* p = static_cast<int*>(std::malloc(16)); p[0] = std::abs(i[1]) + EXIT_FAILURE; i[0] = p[0]; std::free(p);",
       11},
      {"#include <cstring>\n",
       "float tmp[4]; std::memcpy(tmp, f, sizeof tmp); std::memset(f, 0, sizeof tmp);\n"
       "i[0] = std::memcmp(tmp, f, sizeof tmp) + static_cast<int>(std::strlen(\"four\"));",
       11},
      {"#include <limits>\n",
       "static_assert(std::numeric_limits<int>::max() == 2147483647, \"int max\");\n"
       "static_assert(std::numeric_limits<float>::max() == 3.402823466e+38f, \"float max\");\n"
       "static_assert(std::numeric_limits<float>::infinity() > std::numeric_limits<float>::max(), \"inf\");\n"
       "static_assert(std::numeric_limits<unsigned char>::digits == 8 && std::numeric_limits<double>::is_iec559, "
       "\"\");\n"
       "f[0] = -std::numeric_limits<float>::infinity(); f[1] = std::numeric_limits<float>::lowest();",
       17},
      {"#include <type_traits>\n",
       "static_assert(std::is_same<std::remove_cv_t<const float>, float>::value, \"remove_cv\");\n"
       "static_assert(std::is_floating_point_v<double> && !std::is_integral<float>::value, \"traits\");\n"
       "using T = std::conditional_t<true, int, float>; T t = 3; i[0] = t;",
       17},
      {"#include <utility>\n",
       "float a = f[0], b = f[1]; std::swap(a, b); auto p = std::make_pair(a, b);\n"
       "f[0] = std::move(p.first) + p.second;",
       17},
      {"#include <cuda_runtime.h>\n#include <cuda_runtime_api.h>\n#include <device_launch_parameters.h>\n",
       "static_assert(CUDART_VERSION >= 12000, \"CUDART_VERSION\"); i[threadIdx.x] = blockIdx.x * blockDim.x;", 11},
      {"#include <cuda.h>\n",
       "static_assert(CUDA_VERSION == __CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10, \"CUDA_VERSION\");\n"
       "CUdeviceptr p = reinterpret_cast<CUdeviceptr>(f); i[0] = static_cast<int>(p & 1);",
       11},
  };
  return all;
}

std::string kernel_of(const HeaderCase& c) {
  return std::string(c.includes) + "extern \"C\" __global__ void k(float* f, double* d, int* i) {\n" + c.body +
         "\n(void)f; (void)d; (void)i;\n}\n";
}

}  // namespace

// C++11 takes the headers' own definitions, C++17 the libcu++ path; 14 and 20 take the same paths.
TEST_CASE("compat: every stand-in header serves a kernel that uses it, in C++11 and C++17", "[sandbox][compat]") {
  std::vector<CompileJob> jobs;
  std::vector<std::string> labels;
  for (const HeaderCase& c : cases()) {
    for (int standard : {11, 17}) {
      if (standard < c.min_standard) continue;
      jobs.push_back(job_of(kernel_of(c), standard));
      labels.push_back("C++" + std::to_string(standard) + "\n" + jobs.back().source);
    }
  }
  const std::vector<CompileResult> results = compiler().compile_batch(jobs);
  for (std::size_t i = 0; i < results.size(); ++i) {
    INFO(labels[i] << "\n" << results[i].log);
    REQUIRE(results[i].status == CompileStatus::ok);
    CHECK(results[i].ptx.find(".entry k(") != std::string::npos);
  }
}

TEST_CASE("compat: the stand-ins really act: printf reaches vprintf, assert traps, NDEBUG removes it",
          "[sandbox][compat]") {
  const CompileResult p = compile(kernel_of(cases()[8]));  // <cstdio>
  REQUIRE(p.ok());
  CHECK(p.ptx.find("vprintf") != std::string::npos);
  const CompileResult a = compile(kernel_of(cases()[10]));  // <cassert>
  REQUIRE(a.ok());
  CHECK(a.ptx.find("__assertfail") != std::string::npos);
  const CompileResult n = compile(kernel_of(cases()[11]));  // NDEBUG, <assert.h>
  REQUIRE(n.ok());
  CHECK(n.ptx.find("__assertfail") == std::string::npos);
}

TEST_CASE("compat: a libcu++-backed header under C++14 says which standard it needs", "[sandbox][compat]") {
  const CompileResult r = compile("#include <limits>\n__global__ void k() {}\n", 14);
  CHECK(r.status == CompileStatus::error);
  CHECK(r.log.find("needs C++17 or later") != std::string::npos);
}

TEST_CASE("compat: stand-ins agree with libcu++ when a kernel includes both", "[sandbox][compat]") {
  const CompileResult r = compile(
      "#include <cstdint>\n#include <cmath>\n#include <climits>\n#include <cfloat>\n"
      "#include <cuda/std/cstdint>\n#include <cuda/std/cmath>\n#include <cuda/std/limits>\n"
      "#include <cub/block/block_reduce.cuh>\n"
      "static_assert(sizeof(int64_t) == sizeof(cuda::std::int64_t), \"one int64_t\");\n"
      "extern \"C\" __global__ void k(float* f) { f[0] = INFINITY + FLT_MAX + cuda::std::numeric_limits<float>::max(); "
      "}\n");
  INFO(r.log);
  REQUIRE(r.ok());
  CHECK(r.log.find("error") == std::string::npos);
}

TEST_CASE("compat: a shipped header of the same name wins over the stand-in", "[sandbox][compat]") {
  CompileJob j = job_of("");
  j.source = "#include <cmath>\nextern \"C\" __global__ void k(float* f) { f[0] = SHIPPED_CMATH; }\n";
  j.headers = {{"cmath", "#pragma once\n#define SHIPPED_CMATH 2.0f\n"}};
  const CompileResult r = compiler().compile(j);
  INFO(r.log);
  CHECK(r.ok());
}

TEST_CASE("compat: off, the standard and runtime headers are refused, each with what to use instead",
          "[sandbox][compat][jail]") {
  CompilerConfig config = leap_test::config(Isolation::trusted_in_process);
  config.compat_headers = false;
  Compiler c(config);
  CompileJob j = job_of("");
  j.source = "#include <cuda_runtime.h>\n#include <cstdint>\n#include <vector>\n__global__ void k() {}\n";
  const CompileResult r = c.compile(j);
  INFO(r.log);
  REQUIRE(r.status == CompileStatus::refused);
  // <cuda_runtime.h> is the toolkit's own then, which NVRTC compiles: not a refusal.
  CHECK(r.log.find("2 problems") != std::string::npos);
  CHECK(r.log.find("cuda_runtime.h") == std::string::npos);
  CHECK(r.log.find(
            "kernel.cu(2): #include <cstdint>: not available to device code under NVRTC: use <cuda/std/cstdint>") !=
        std::string::npos);
  CHECK(r.log.find("kernel.cu(3): #include <vector>: host-only standard header") != std::string::npos);
}

TEST_CASE("compat: the layer's identity is part of the cache key's compiler tag", "[sandbox][compat]") {
  const std::string tag = compat_headers_tag();
  CHECK(tag.starts_with("compat "));
  CHECK(tag.size() == 7 + 16);
  CHECK(compat_headers().size() >= 25);
  for (const CompatHeader& h : compat_headers()) {
    INFO(h.name);
    CHECK(is_compat_header(h.name));
    CHECK_FALSE(h.summary.empty());
    CHECK(h.content.find("leap compat") != std::string_view::npos);
  }
  CHECK_FALSE(is_compat_header("vector"));
}

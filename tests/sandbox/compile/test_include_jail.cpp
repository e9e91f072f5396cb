// SPDX-License-Identifier: Apache-2.0
// The scanner on its own: what it lets through and what it refuses, without compiling anything.
#include <catch2/catch.hpp>
#include "compile/include_jail.hpp"
#include <string>
#include <vector>

#include "cpu_bound.hpp"

using namespace leap::sandbox;

namespace {
JailVerdict scan(const std::string& src, const std::vector<Header>& shipped = {}) {
  return scan_source(src, "kernel.cu", shipped, IncludePolicy::cuda_defaults());
}
}  // namespace

TEST_CASE("jail: allow-listed and shipped includes pass and are reported", "[sandbox][jail]") {
  const std::vector<Header> shipped = {{"task/ref.h", "#pragma once\n"}};
  const JailVerdict v = scan(
      "#include <cuda_fp16.h>\n#include \"cuda_bf16.h\"\n#  include <cuda/std/cstdint> // trailing comment\n"
      "#include \"task/ref.h\"\n#pragma unroll\n_Pragma(\"unroll 4\")\n"
      "const char* s = \"#include </etc/passwd>\";  // a string is not a directive\n"
      "/* #include </etc/passwd> */\nint x = 1'000'000;\n#define STR(x) #x\n#if 0\n#endif\n",
      shipped);
  INFO(v.message);
  REQUIRE(v.allowed);
  CHECK(v.includes == std::vector<std::string>{"cuda_fp16.h", "cuda_bf16.h", "cuda/std/cstdint", "task/ref.h"});
}

TEST_CASE("jail: every escape form is refused with a message naming it", "[sandbox][jail]") {
  struct Case {
    const char* src;
    const char* needle;  // part of the message
  };
  const Case cases[] = {
      {"#include \"/etc/passwd\"\n", "/etc/passwd"},
      {"#include </etc/passwd>\n", "/etc/passwd"},
      {"#include \"../../../../etc/passwd\"\n", "../../../../etc/passwd"},
      {"#include <cuda/../../../../etc/passwd>\n", "cuda/../../../../etc/passwd"},
      {"#include <cuda/std//cstdint>\n", "cuda/std//cstdint"},
      {"#include \"/proc/self/environ\"\n", "/proc/self/environ"},
      {"#define F \"/etc/passwd\"\n#include F\n", "macro-built"},
      {"#define S(x) #x\n#define F(x) S(x)\n#include F(/etc/passwd)\n", "macro-built"},
      {"#include_next \"/etc/passwd\"\n", "#include_next"},
      {"#import \"/etc/passwd\"\n", "#import"},
      {"#embed \"/etc/passwd\"\n", "#embed"},
      {"#if __has_include(\"/etc/passwd\")\n#endif\n", "__has_include"},
      {"#if defined(__has_include_next)\n#endif\n", "__has_include_next"},
      {"#if _CCCL_HAS_INCLUDE(\"/etc/passwd\")\n#endif\n", "_CCCL_HAS_INCLUDE"},
      {"#if __has_embed(\"/etc/passwd\")\n#endif\n", "__has_embed"},
      {"%:include \"/etc/passwd\"\n", "/etc/passwd"},
      {"#inc\\\nlude \"/etc/passwd\"\n", "/etc/passwd"},
      {"# /* hidden */ include \"/etc/passwd\"\n", "/etc/passwd"},
      {"/* a comment\n spanning lines */ #include \"/etc/passwd\"\n", "/etc/passwd"},
      {"?\?=include \"/etc/passwd\"\n", "trigraph"},
      {"#line 1 \"/etc/passwd\"\n", "#line"},
      {"# 1 \"/etc/passwd\"\n", "#line"},
      {"#pragma GCC dependency \"/etc/passwd\"\n", "dependency"},
      {"#pragma include_alias(\"a.h\", \"/etc/passwd\")\n", "include_alias"},
      {"_Pragma(\"GCC dependency \\\"/etc/passwd\\\"\")\n", "dependency"},
      {"#define P(x) _Pragma(#x)\n", "_Pragma"},
      {"#define Q _CCCL_PRAGMA(GCC dependency \"/etc/passwd\")\n", "_CCCL_PRAGMA"},
      {"#include \"kernel.h\"\n", "kernel.h"},
      {"#include \"cuda_fp16.h\" extra\n", "extra tokens"},
      {"#assert machine(x86)\n", "#assert"},
      {"/* unterminated\n#include \"/etc/passwd\"\n", "unterminated comment"},
  };
  for (const Case& c : cases) {
    const std::string src = c.src;
    const JailVerdict v = scan(src);
    INFO(src);
    INFO(v.message);
    CHECK_FALSE(v.allowed);
    CHECK(v.message.find("refused by the include jail") != std::string::npos);
    CHECK(v.message.find(c.needle) != std::string::npos);
  }
}

TEST_CASE("jail: NUL bytes are refused", "[sandbox][jail]") {
  const std::string src("int x;\0\n#include \"/etc/passwd\"\n", 30);
  const JailVerdict v = scan(src);
  CHECK_FALSE(v.allowed);
  CHECK(v.message.find("NUL") != std::string::npos);
}

TEST_CASE("jail: a raw string cannot hide a directive from the scanner", "[sandbox][jail]") {
  // The directive after the raw string is real and must be seen.
  const JailVerdict v = scan("const char* r = R\"x(text )\" still)x\";\n#include \"/etc/passwd\"\n");
  CHECK_FALSE(v.allowed);
  // One inside the raw string is text, as for the compiler.
  CHECK(scan("const char* r = R\"x(\n#include \"/etc/passwd\"\n)x\";\n").allowed);
}

TEST_CASE("jail: shipped headers are scanned too", "[sandbox][jail]") {
  CompileJob job;
  job.source = "#include \"helper.h\"\n";
  job.headers = {{"helper.h", "#include \"/etc/passwd\"\n"}};
  const JailVerdict v = check_job(job, IncludePolicy::cuda_defaults());
  CHECK_FALSE(v.allowed);
  CHECK(v.message.find("helper.h(1)") != std::string::npos);
}

TEST_CASE("jail: names and policies", "[sandbox][jail]") {
  CHECK(is_clean_relative_name("cuda/std/cstdint"));
  CHECK(is_clean_relative_name("a-b_c+1.h"));
  CHECK_FALSE(is_clean_relative_name("/abs.h"));
  CHECK_FALSE(is_clean_relative_name("a/../b.h"));
  CHECK_FALSE(is_clean_relative_name("./b.h"));
  CHECK_FALSE(is_clean_relative_name("a//b.h"));
  CHECK_FALSE(is_clean_relative_name("a\\b.h"));
  CHECK_FALSE(is_clean_relative_name(""));
  const IncludePolicy p = IncludePolicy::cuda_defaults();
  CHECK(p.allows("cuda_fp16.h"));
  CHECK(p.allows("cuda/std/type_traits"));
  CHECK_FALSE(p.allows("cuda/"));
  CHECK_FALSE(p.allows("stdio.h"));
  CHECK_FALSE(IncludePolicy::none().allows("cuda_fp16.h"));
}

TEST_CASE("jail: scrub_paths replaces the longest prefix first", "[sandbox][jail]") {
  const std::vector<PathScrub> s = {
      {"/usr/local/cuda", "<cuda>"}, {"/usr/local/cuda/include", "<cuda>/include"}, {"/", "never"}};
  CHECK(scrub_paths("/usr/local/cuda/include/x.h(3): /usr/local/cuda/bin", s) == "<cuda>/include/x.h(3): <cuda>/bin");
}

TEST_CASE("jail: the allow-list follows the toolkit: any header under its include directories", "[sandbox][jail]") {
  const IncludePolicy toolkit = IncludePolicy::cuda_defaults();
  for (const char* name : {"cuda_runtime.h", "curand_kernel.h", "math_constants.h", "cub/block/block_reduce.cuh",
                           "cub/warp/warp_reduce.cuh", "thrust/functional.h", "vector_types.h", "mma.h",
                           "cooperative_groups.h", "cooperative_groups/reduce.h", "cuda/std/cstdint", "cuda_fp16.h"}) {
    INFO(name);
    CHECK(toolkit.allows(name));
  }
  for (const char* name : {"no_such_header.h", "cub/no_such.cuh", "torch/extension.h", "../include/cuda_fp16.h",
                           "/usr/local/cuda/include/cuda_fp16.h", "cub", "cuda"}) {
    INFO(name);
    CHECK_FALSE(toolkit.allows(name));
  }
}

TEST_CASE("jail: every refused include of a source in one answer, each located and with what to do",
          "[sandbox][jail]") {
  const JailVerdict v = scan(
      "#include <torch/extension.h>\n"
      "#include <pybind11/pybind11.h>\n"
      "#include <cuda_fp16.h>\n"
      "#include \"helper_math.h\"\n"
      "#include </etc/passwd>\n"
      "#include <iostream>\n"
      "#include <tuple>\n"
      "__global__ void k() {}\n");
  INFO(v.message);
  REQUIRE_FALSE(v.allowed);
  REQUIRE(v.refusals.size() == 6);
  const std::string host =
      "host-only: torch and pybind11 code is not run here; submit device code only, the harness "
      "launches your kernel";
  CHECK(v.message.starts_with("refused by the include jail: 6 problems, fix all of them:\n"));
  CHECK(v.message.find("kernel.cu(1): #include <torch/extension.h>: " + host) != std::string::npos);
  CHECK(v.message.find("kernel.cu(2): #include <pybind11/pybind11.h>: " + host) != std::string::npos);
  CHECK(v.message.find(
            "kernel.cu(4): #include \"helper_math.h\": not in the toolkit: inline it or ship it as a header") !=
        std::string::npos);
  CHECK(v.message.find("kernel.cu(5): #include </etc/passwd>: outside the toolkit") != std::string::npos);
  CHECK(v.message.find("kernel.cu(6): #include <iostream>: host-only standard header") != std::string::npos);
  CHECK(v.message.find(
            "kernel.cu(7): #include <tuple>: not available to device code under NVRTC: use <cuda/std/tuple>") !=
        std::string::npos);
  CHECK(v.message.find("#include <cuda_fp16.h>") == std::string::npos);
  CHECK(v.refusals[0].include == "torch/extension.h");
  CHECK(v.refusals[0].line == 1);
  CHECK(v.refusals[3].include == "/etc/passwd");
}

TEST_CASE("jail: a runtime header refused by a narrow policy is explained as removable", "[sandbox][jail]") {
  const JailVerdict v = scan_source("#include <cuda_runtime.h>\n#include <device_launch_parameters.h>\n", "kernel.cu",
                                    {}, IncludePolicy::none());
  INFO(v.message);
  REQUIRE(v.refusals.size() == 2);
  CHECK(v.refusals[0].advice == "remove it: NVRTC needs no runtime header");
  CHECK(v.refusals[1].advice == "remove it: NVRTC needs no runtime header");
}

TEST_CASE("jail: refusals of the source and of its shipped headers come together", "[sandbox][jail]") {
  CompileJob job;
  job.source = "#include \"util.cuh\"\n#include <vector>\n";
  job.headers = {{"util.cuh", "#pragma once\n#include <torch/extension.h>\n#if __has_include(<x.h>)\n#endif\n"}};
  const JailVerdict v = check_job(job, IncludePolicy::cuda_defaults());
  INFO(v.message);
  REQUIRE(v.refusals.size() == 3);
  CHECK(v.message.find("kernel.cu(2): #include <vector>") != std::string::npos);
  CHECK(v.message.find("util.cuh(2): #include <torch/extension.h>: host-only") != std::string::npos);
  CHECK(v.message.find("util.cuh(3): '__has_include'") != std::string::npos);
  CHECK(v.includes.empty());
}

// A serve request may ship as many headers as its 4 MiB holds, each of which the jail scans: a search
// through every shipped header per #include, and per header for one given twice, grew with their
// product (2e10 comparisons for 150 000 headers). Now each name is looked up once in a set.
TEST_CASE("jail: a job of many shipped headers is checked in time linear in their number", "[sandbox][jail][scans]") {
  constexpr int k_headers = 150000;
  CompileJob job;
  job.file_name = "kernel.cu";
  for (int i = 0; i < k_headers; ++i) {
    const std::string name = "h" + std::to_string(i) + ".cuh";
    job.headers.push_back({name, i + 1 < k_headers ? "" : "#include \"h0.cuh\"\n"});
    job.source += "#include \"" + name + "\"\n";
  }
  CHECK(leap_test::finishes_within_cpu_seconds(10, [&] {
    const JailVerdict v = check_job(job, IncludePolicy::none());
    return v.allowed && v.includes.size() == static_cast<std::size_t>(k_headers) + 1;
  }));
  job.headers.push_back({"h7.cuh", ""});  // given twice: still found, and named
  const JailVerdict twice = check_job(job, IncludePolicy::none());
  CHECK_FALSE(twice.allowed);
  CHECK(twice.message.find("shipped header 'h7.cuh' given twice") != std::string::npos);
}

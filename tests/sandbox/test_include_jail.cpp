// SPDX-License-Identifier: Apache-2.0
// The scanner on its own: what it lets through and what it refuses, without compiling anything.
#include <catch2/catch.hpp>
#include <leap/sandbox/include_jail.hpp>
#include <string>
#include <vector>

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
  const std::vector<PathScrub> s = {{"/usr/local/cuda", "<cuda>"}, {"/usr/local/cuda/include", "<cuda>/include"}, {"/", "never"}};
  CHECK(scrub_paths("/usr/local/cuda/include/x.h(3): /usr/local/cuda/bin", s) == "<cuda>/include/x.h(3): <cuda>/bin");
}

// SPDX-License-Identifier: Apache-2.0
// Real NVRTC compiles (no GPU needed): good kernels, errors, the jail end to end, the time limit.
#include <catch2/catch.hpp>
#include <leap/sandbox/compiler.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_support.hpp"

using namespace leap::sandbox;

namespace {
CompileJob job_of(std::string source) {
  CompileJob j;
  j.source = std::move(source);
  return j;
}
bool has_sm90_elf(const CompileResult& r) {
  return r.cubin.size() > 4 && r.cubin.compare(0, 4,
                                               "\x7f"
                                               "ELF") == 0;
}
}  // namespace

TEST_CASE("compile: a plain kernel gives PTX and CUBIN", "[sandbox][compile]") {
  Compiler c(leap_test::config(Isolation::trusted_in_process));
  const CompileResult r = c.compile(job_of(leap_test::plain_kernel()));
  INFO(r.log);
  REQUIRE(r.status == CompileStatus::ok);
  CHECK(r.ptx.find(".entry scale") != std::string::npos);
  CHECK(r.ptx.find(".target sm_90") != std::string::npos);
  CHECK(has_sm90_elf(r));
  CHECK_FALSE(r.cache_hit);
  CHECK(r.seconds > 0.0);

  SECTION("compute_ arch gives PTX only") {
    CompileJob j = job_of(leap_test::plain_kernel());
    j.options.arch = "compute_80";
    const CompileResult p = c.compile(j);
    REQUIRE(p.ok());
    CHECK(p.cubin.empty());
    CHECK(p.ptx.find(".target sm_80") != std::string::npos);
  }
}

TEST_CASE("compile: templates instantiated through name expressions", "[sandbox][compile]") {
  Compiler c(leap_test::config(Isolation::process));
  CompileJob j = job_of(
      "template <class T, int N> __global__ void axpy(T* y, const T* x, T a) {\n"
      "  int i = blockIdx.x * N + threadIdx.x; y[i] += a * x[i];\n}\n");
  j.options.name_expressions = {"axpy<float, 4>", "axpy<double, 8>"};
  const CompileResult r = c.compile(j);
  INFO(r.log);
  REQUIRE(r.ok());
  REQUIRE(r.lowered_names.size() == 2);
  CHECK(r.lowered_names[0].expression == "axpy<float, 4>");
  CHECK(r.lowered_names[0].lowered == "_Z4axpyIfLi4EEvPT_PKS0_S0_");
  CHECK(r.lowered_names[1].lowered == "_Z4axpyIdLi8EEvPT_PKS0_S0_");
  CHECK(r.ptx.find(r.lowered_names[1].lowered) != std::string::npos);
}

TEST_CASE("compile: fp16, bf16 and libcu++ headers from the allow-list", "[sandbox][compile]") {
  Compiler c(leap_test::config(Isolation::process));
  const CompileResult r = c.compile(job_of(
      "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n#include <cuda/std/cstdint>\n"
      "extern \"C\" __global__ void h(__half* x, __nv_bfloat16* y, cuda::std::uint32_t n) {\n"
      "  if (threadIdx.x < n) { x[threadIdx.x] = __hadd(x[threadIdx.x], x[0]); y[0] = __float2bfloat16(1.0f); }\n}\n"));
  INFO(r.log);
  REQUIRE(r.ok());
  CHECK(r.ptx.find(".entry h") != std::string::npos);
}

TEST_CASE("compile: shipped headers resolve in memory", "[sandbox][compile]") {
  CompilerConfig cfg = leap_test::config(Isolation::trusted_in_process);
  cfg.includes = IncludePolicy::none();
  Compiler c(cfg);
  CompileJob j = job_of("#include \"task/ref.h\"\nextern \"C\" __global__ void k(float* x) { x[0] = twice(x[1]); }\n");
  j.headers = {{"task/ref.h", "#pragma once\n__device__ inline float twice(float v) { return 2 * v; }\n"}};
  const CompileResult r = c.compile(j);
  INFO(r.log);
  CHECK(r.ok());
}

TEST_CASE("compile: an error is a result with the line in the log", "[sandbox][compile]") {
  Compiler c(leap_test::config(Isolation::process));
  const CompileResult r =
      c.compile(job_of("__global__ void k(float* x) {\n  x[0] = 1.0f;\n  x[1] = undefined_thing;\n}\n"));
  CHECK(r.status == CompileStatus::error);
  CHECK(r.log.find("kernel.cu(3): error") != std::string::npos);
  CHECK(r.log.find("undefined_thing") != std::string::npos);
  CHECK(r.ptx.empty());
  CHECK(r.cubin.empty());
}

TEST_CASE("compile: an intrinsic misused is an error whose log shows NVRTC's built-in overloads",
          "[sandbox][compile]") {
  Compiler c(leap_test::config(Isolation::trusted_in_process));
  const CompileResult r = c.compile(job_of(
      "extern \"C\" __global__ void k(float* x) {\n  float* p = x;\n  x[0] = __shfl_up_sync(0xffffffffu, p, 1);\n}\n"));
  INFO(r.log);
  CHECK(r.status == CompileStatus::error);
  CHECK(r.log.find("kernel.cu(3): error") != std::string::npos);
  CHECK(r.log.find("__shfl_up_sync(unsigned int, float, unsigned int, int)") != std::string::npos);
}

TEST_CASE("compile: the log is capped and host paths are scrubbed", "[sandbox][compile]") {
  Compiler c(leap_test::config(Isolation::trusted_in_process));
  std::string src = "__global__ void k(float* x) {\n";
  for (int i = 0; i < 400; ++i) src += "  x[0] = undefined_" + std::to_string(i) + ";\n";
  src += "}\n";
  CompileJob j = job_of(src);
  j.options.max_log_bytes = 2048;
  const CompileResult r = c.compile(j);
  CHECK(r.status == CompileStatus::error);
  CHECK(r.log.size() <= 2048 + 128);
  CHECK(r.log.find("[log truncated") != std::string::npos);

  // A note inside a toolkit header names it: the path must come back scrubbed, the note kept.
  const CompileResult w =
      c.compile(job_of("#include <cuda_fp16.h>\n__global__ void k(__half* x) { x[0] = __hadd(x[0]); }\n"));
  CHECK(w.status == CompileStatus::error);
  CHECK(w.log.find("<cuda>/include/cuda_fp16.h(") != std::string::npos);
  CHECK(w.log.find("/usr/local/cuda") == std::string::npos);
}

TEST_CASE("compile: no include escape reaches a host file", "[sandbox][compile][jail]") {
  leap_test::TempDir dir;
  const std::string marker = "LEAP_SECRET_MARKER_7f3a9c";
  const std::string secret = dir.write("secret.txt", marker + " the content must never leak\n").string();
  const std::string secret_h = dir.write("secret.h", "int " + marker + "_h = 1;\n").string();
  std::string rel = "../../../../../../../..";
  rel += secret;
  const std::vector<std::string> sources = {
      "#include \"" + secret + "\"\n",
      "#include <" + secret + ">\n",
      "#include \"" + rel + "\"\n",
      "#include <cuda/" + rel + ">\n",
      "#define F \"" + secret + "\"\n#include F\n",
      "#define S(x) #x\n#define F(x) S(x)\n#include F(" + secret + ")\n",
      "#include_next \"" + secret + "\"\n",
      "#if __has_include(\"" + secret_h + "\")\nint exists;\n#endif\n",
      "#include <cuda/std/cstdint>\n#if _CCCL_HAS_INCLUDE(\"" + secret_h + "\")\nint exists;\n#endif\n",
      "%:include \"" + secret + "\"\n",
      "#inc\\\nlude \"" + secret + "\"\n",
      "# /**/ include \"" + secret + "\"\n",
      "#include \"/proc/self/environ\"\n",
      "#include \"/etc/passwd\"\n",
      "#line 1 \"" + secret + "\"\n#error x\n",
      "_Pragma(\"GCC dependency \\\"" + secret + "\\\"\")\n",
      "?\?=include \"" + secret + "\"\n",
      "#embed \"" + secret + "\"\n",
  };
  Compiler c(leap_test::config(Isolation::process));
  for (const std::string& src : sources) {
    const CompileResult r = c.compile(job_of(src + "__global__ void k() {}\n"));
    INFO(src);
    INFO(r.log);
    CHECK(r.status == CompileStatus::refused);
    CHECK(r.log.find("refused") != std::string::npos);
    CHECK(r.log.find(marker) == std::string::npos);
    CHECK(r.log.find("root:") == std::string::npos);  // /etc/passwd's first line
    CHECK(r.ptx.empty());
    CHECK(r.cubin.empty());
  }

  SECTION("a shipped header cannot include the host file either") {
    CompileJob j = job_of("#include \"helper.h\"\n");
    j.headers = {{"helper.h", "#include \"" + secret + "\"\n"}};
    const CompileResult r = c.compile(j);
    CHECK(r.status == CompileStatus::refused);
    CHECK(r.log.find(marker) == std::string::npos);
  }
  SECTION("the message names the include") {
    const CompileResult r = c.compile(job_of("#include \"/etc/passwd\"\n"));
    CHECK(r.log.find("\"/etc/passwd\"") != std::string::npos);
  }
}

TEST_CASE("compile: a compile bomb stops near the time limit and the next compile works",
          "[sandbox][compile][timeout]") {
  // 10^6 macro-expanded statements: minutes of front-end work without a limit.
  const std::string bomb =
      "#define A(x) x x x x x x x x x x\n#define B(x) A(A(x))\n#define C(x) B(B(x))\n"
      "__global__ void k(float* p) { float v = p[threadIdx.x];\n"
      "  A(A(C(v = v * 1.0001f + p[(int)v & 7];))) p[0] = v; }\n";
  Compiler c(leap_test::config(Isolation::process));
  CompileJob j = job_of(bomb);
  j.options.timeout = std::chrono::milliseconds(1500);
  const CompileResult r = c.compile(j);
  CHECK(r.status == CompileStatus::timeout);
  CHECK(r.limit == CompileLimit::cpu_time);
  // The limit is the child's CPU time (sampled every 20 ms); wall time may be longer on a busy machine.
  CHECK(r.cpu_seconds >= 1.45);
  CHECK(r.cpu_seconds < 3.5);  // RLIMIT_CPU (limit + 1 s) ends it even if the sampling parent is starved
  CHECK(r.seconds >= r.cpu_seconds - 0.05);
  CHECK(r.log.find("CPU time limit of 1500 ms") != std::string::npos);
  CHECK(c.compile(job_of(leap_test::plain_kernel())).ok());
}

TEST_CASE("compile: in-process, the flow callback cancels at the next phase boundary", "[sandbox][compile][timeout]") {
  // 10^5 statements; NVRTC 13.0 only asks the callback between phases, so it stops after parsing.
  const std::string bomb =
      "#define A(x) x x x x x x x x x x\n#define B(x) A(A(x))\n#define C(x) B(B(x))\n"
      "__global__ void k(float* p) { float v = p[threadIdx.x];\n"
      "  A(C(v = v * 1.0001f + p[(int)v & 7];)) p[0] = v; }\n";
  Compiler c(leap_test::config(Isolation::trusted_in_process));
  CompileJob j = job_of(bomb);
  j.options.timeout = std::chrono::milliseconds(200);
  const CompileResult r = c.compile(j);
  CHECK(r.status == CompileStatus::timeout);
  CHECK(r.seconds < 20.0);
  CHECK(c.compile(job_of(leap_test::plain_kernel())).ok());
}

TEST_CASE("compile: concurrent compiles give the same bytes as serial ones", "[sandbox][compile][batch]") {
  std::vector<CompileJob> jobs;
  for (int i = 0; i < 8; ++i) {
    CompileJob j = job_of(std::string(leap_test::plain_kernel()) + "__global__ void extra" + std::to_string(i) +
                          "(int* y) { y[threadIdx.x] = " + std::to_string(i * 3) + " * threadIdx.x; }\n");
    if (i == 5) j.source += "#include \"/etc/passwd\"\n";
    if (i == 6) j.source += "int broken(\n";
    jobs.push_back(std::move(j));
  }
  for (Isolation iso : {Isolation::trusted_in_process, Isolation::process}) {
    Compiler serial(leap_test::config(iso, 1));
    Compiler parallel(leap_test::config(iso, 4));
    std::vector<std::size_t> seen;
    const auto a = serial.compile_batch(jobs);
    const auto b = parallel.compile_batch(jobs, [&](const BatchProgress& p) {
      CHECK(p.total == jobs.size());
      CHECK(p.done == seen.size() + 1);
      seen.push_back(p.index);
    });
    REQUIRE(a.size() == jobs.size());
    REQUIRE(b.size() == jobs.size());
    CHECK(seen.size() == jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      INFO(i);
      CHECK(a[i].status == b[i].status);
      CHECK(a[i].ptx == b[i].ptx);
      CHECK(a[i].cubin == b[i].cubin);
      CHECK(a[i].log == b[i].log);
    }
    CHECK(a[5].status == CompileStatus::refused);
    CHECK(a[6].status == CompileStatus::error);
    CHECK(a[0].ok());
  }
}

TEST_CASE("compile: bad options are misuse and name the option", "[sandbox][compile][options]") {
  Compiler c(leap_test::config(Isolation::trusted_in_process));
  auto expect_throw = [&](auto mutate, const std::string& needle) {
    CompileJob j = job_of(leap_test::plain_kernel());
    mutate(j.options);
    try {
      (void)c.compile(j);
      FAIL("no exception for " << needle);
    } catch (const std::invalid_argument& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(needle) != std::string::npos);
    }
  };
  expect_throw([](CompileOptions& o) { o.arch = "sm_91x"; }, "arch = \"sm_91x\"");
  expect_throw([](CompileOptions& o) { o.arch = "sm_10"; }, "does not support");
  expect_throw([](CompileOptions& o) { o.cxx_standard = 23; }, "cxx_standard");
  expect_throw([](CompileOptions& o) { o.timeout = std::chrono::milliseconds(0); }, "timeout");
  expect_throw([](CompileOptions& o) { o.defines = {{"1bad", ""}}; }, "defines");
  expect_throw([](CompileOptions& o) { o.defines = {{"X", "\"/etc/passwd\""}}; }, "plain tokens");
  expect_throw([](CompileOptions& o) { o.defines = {{"X", "__has_include(x)"}}; }, "__has_include");
  expect_throw([](CompileOptions& o) { o.name_expressions = {"f)\n#include \"/etc/passwd\""}; }, "name_expressions");
  CompilerConfig broken;
  broken.cuda_include_dir = "/nonexistent/include";
  CHECK_THROWS_AS(Compiler(broken), std::runtime_error);
}

TEST_CASE("compile: process isolation loads NVRTC's builtins before forking, so children load nothing",
          "[sandbox][compile]") {
  const auto builtins_mapped = [] {
    return leap_test::read_file("/proc/self/maps").find("libnvrtc-builtins") != std::string::npos;
  };
  Compiler c(leap_test::config(Isolation::process));
  CHECK(builtins_mapped());
  const CompileResult r = c.compile(job_of(leap_test::plain_kernel()));
  CHECK(r.ok());
}

TEST_CASE("compile: versions and archs are reported", "[sandbox][compile]") {
  const NvrtcVersion v = nvrtc_version();
  CHECK(v.major >= 12);
  const std::vector<int> archs = supported_archs();
  CHECK(std::find(archs.begin(), archs.end(), 90) != archs.end());
  CHECK(cupti_api_version() > 0);
  CHECK_FALSE(default_cuda_include_dir().empty());
}

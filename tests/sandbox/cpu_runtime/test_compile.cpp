// SPDX-License-Identifier: Apache-2.0
// Compiling at run time (compile_module_text, as a verification of a task's reference will) and on
// the command line (leap-cpu-cc): a module that loads and runs, a failed compile as a result with the
// source's line, a declaration the rewrite refuses, a file that is not a module.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cpu_runtime_support.hpp"
#include "leap/cpu_runtime/compile.hpp"

namespace leap::cpu_runtime::test {
namespace {

namespace fs = std::filesystem;

// A directory for the test's modules, under the build tree.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(LEAP_CPU_TEST_MODULES) / "scratch" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST_CASE("a source compiled at run time loads, lists its kernels with their parameters, and runs",
          "[cpu_runtime][compile]") {
  const fs::path dir = scratch("runtime_compile");
  const std::string src = R"(#include <cuda_fp16.h>
extern "C" __global__ void scale(float* x, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
__global__ void halves(__half* h, double d, long long n) {}
)";
  const CompileResult c = compile_module_text(src, "scale.cu", dir / "scale.so");
  INFO(c.log);
  REQUIRE(c.ok);
  CHECK(c.kernels == std::vector<std::string>{"scale", "halves"});
  const Module m = Module::load(dir / "scale.so");
  CHECK(m.kernel("scale").signature() == "scale(pointer, floating 4, integer 4)");
  CHECK(m.kernel("halves").signature() == "halves(pointer, floating 8, integer 8)");
  std::vector<float> x(100, 2.0f);
  float* px = x.data();
  const float a = 1.5f;
  const int n = 100;
  run_ok(m.kernel("scale"), {4}, {32}, 0, Schedule::random(2), px, a, n);
  CHECK(x == std::vector<float>(100, 3.0f));
}

TEST_CASE("a failed compile is a result whose log names the source's line", "[cpu_runtime][compile]") {
  const fs::path dir = scratch("failed_compile");
  const CompileResult c = compile_module_text("extern \"C\" __global__ void k(int* p) {\n  p[0] = undeclared;\n}\n",
                                              "broken.cu", dir / "broken.so");
  CHECK_FALSE(c.ok);
  CHECK_THAT(c.log, Catch::Contains("broken.cu:2") && Catch::Contains("undeclared"));
  CHECK_FALSE(fs::exists(dir / "broken.so"));
  const CompileResult refused = compile_module_text("__shared__ float table[4];\n", "global.cu", dir / "global.so");
  CHECK_FALSE(refused.ok);
  CHECK_THAT(refused.log, Catch::Contains("global.cu:1: a __shared__ variable at namespace scope"));
}

TEST_CASE("C's floating-point macros are undefined, as under NVRTC without an include", "[cpu_runtime][compile]") {
  const fs::path dir = scratch("nvrtc_macros");
  for (const char* macro : {"INFINITY", "NAN", "HUGE_VALF"}) {
    const std::string src = std::string("extern \"C\" __global__ void k(float* p) { p[0] = ") + macro + "; }\n";
    const CompileResult c = compile_module_text(src, "macro.cu", dir / "macro.so");
    INFO(macro << "\n" << c.log);
    CHECK_FALSE(c.ok);
    CHECK_THAT(c.log, Catch::Contains(macro));
  }
  // math_constants.h, which NVRTC offers, spells them
  const CompileResult c = compile_module_text(
      "#include <math_constants.h>\nextern \"C\" __global__ void k(float* p) { p[0] = -CUDART_INF_F; }\n", "inf.cu",
      dir / "inf.so");
  INFO(c.log);
  CHECK(c.ok);
}

TEST_CASE("a shared object that is not a module is refused with the reason", "[cpu_runtime][compile]") {
  CHECK_THROWS_WITH(Module::load("/nonexistent/module.so"), Catch::Contains("cannot load it"));
  const fs::path dir = scratch("not_a_module");
  std::ofstream(dir / "plain.cpp") << "extern \"C\" int plain() { return 1; }\n";
  const std::string cmd = "c++ -shared -fPIC -o " + (dir / "plain.so").string() + " " + (dir / "plain.cpp").string();
  REQUIRE(std::system(cmd.c_str()) == 0);
  CHECK_THROWS_WITH(Module::load(dir / "plain.so"), Catch::Contains("not a module of the CPU runtime"));
}

TEST_CASE("leap-cpu-cc compiles a source into a module, and exits 1 on a failed compile", "[cpu_runtime][compile]") {
  const fs::path dir = scratch("cli");
  std::ofstream(dir / "ok.cu") << "extern \"C\" __global__ void k(int* p) { p[threadIdx.x] = 7; }\n";
  std::ofstream(dir / "bad.cu") << "extern \"C\" __global__ void k(int* p) { p[0] = nope; }\n";
  const std::string cc = LEAP_CPU_CC;
  CHECK(std::system((cc + " -O1 -o " + (dir / "ok.so").string() + " " + (dir / "ok.cu").string() + " > " +
                     (dir / "ok.log").string())
                        .c_str()) == 0);
  std::ifstream log(dir / "ok.log");
  std::string line;
  std::getline(log, line);
  CHECK(line == "kernel k");
  const Module m = Module::load(dir / "ok.so");
  std::vector<int> out(8, 0);
  int* p = out.data();
  run_ok(m.kernel("k"), {1}, {8}, 0, Schedule::in_order(), p);
  CHECK(out == std::vector<int>(8, 7));
  const int bad = std::system(
      (cc + " -o " + (dir / "bad.so").string() + " " + (dir / "bad.cu").string() + " 2> " + (dir / "bad.log").string())
          .c_str());
  CHECK(WEXITSTATUS(bad) == 1);
  CHECK(std::system((cc + " > /dev/null 2>&1").c_str()) != 0);  // misuse: no source
}

TEST_CASE("the runtime's kernel headers are written out once per process", "[cpu_runtime][compile]") {
  const fs::path& dir = kernel_include_dir();
  CHECK(fs::exists(dir / "cuda_fp16.h"));
  CHECK(fs::exists(dir / "cooperative_groups" / "reduce.h"));
  CHECK(fs::exists(dir / "leap_cpu" / "prelude.hpp"));
  CHECK(&kernel_include_dir() == &dir);
}

TEST_CASE("the kernel headers' directory outlives a forked child that exits through the static destructors",
          "[cpu_runtime][compile]") {
  const fs::path dir = kernel_include_dir();
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) std::exit(0);  // runs the destructors of this process's statics, in the child
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(fs::exists(dir / "leap_cpu" / "prelude.hpp"));
}

}  // namespace
}  // namespace leap::cpu_runtime::test

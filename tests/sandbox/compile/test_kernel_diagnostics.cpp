// SPDX-License-Identifier: Apache-2.0
// A module that compiles but lacks its kernel is told why and what to write; headers and compile
// options reach the compiler from the CLI and from serve requests, under the include jail.
#include <catch2/catch.hpp>
#include "compile/kernel_diagnostics.hpp"
#include <nlohmann/json.hpp>
#include <map>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "cpu_bound.hpp"

using namespace leap::sandbox;
using nlohmann::json;

TEST_CASE("diagnostics: kernel templates are found with an instantiation that fits them", "[sandbox][diagnostics]") {
  const std::string src =
      "// template <typename T> __global__ void in_a_comment(T* x);\n"
      "template <typename scalar_t, int BLOCK = 128>\n"
      "__global__ void __launch_bounds__(BLOCK)\n"
      "softmax_kernel(const scalar_t* __restrict__ x, scalar_t* y, int rows) {}\n"
      "template <class T> __device__ T twice(T v) { return v + v; }\n"
      "template<typename T, typename Acc = float, bool kMasked> __global__ void reduce(T* out, const T* in) {}\n"
      "template __global__ void reduce<float, float, true>(float*, const float*);\n";
  const std::vector<KernelTemplate> t = kernel_templates(src);
  REQUIRE(t.size() == 2);
  CHECK(t[0].name == "softmax_kernel");
  CHECK(t[0].line == 3);
  CHECK(t[0].instantiation ==
        "template __global__ void softmax_kernel<float, 128>(const float* __restrict__ x, float* y, int rows);");
  CHECK(t[1].name == "reduce");
  CHECK(t[1].line == 6);
  CHECK(t[1].instantiation == "template __global__ void reduce<float, float, kMasked>(float* out, const float* in);");
  CHECK(t[0].parameters == "const float* __restrict__ x, float* y, int rows");
  CHECK(t[0].call == "softmax_kernel<float, 128>(x, y, rows)");
}

TEST_CASE("diagnostics: what a module without its kernel is told", "[sandbox][diagnostics]") {
  const std::string tpl = "template <typename T>\n__global__ void relu(T* x, int n) {}\n";
  SECTION("no kernel at all, a template only a launcher instantiated") {
    const std::string a = missing_kernel_advice(tpl, "kernel.cu", {});
    CHECK(a.starts_with(
        "the module defines no kernel: the kernel template 'relu' (kernel.cu line 2) is never instantiated"));
    CHECK(a.find("template __global__ void relu<float>(float* x, int n);") != std::string::npos);
  }
  SECTION("no kernel and no template") {
    CHECK(missing_kernel_advice("__device__ int f() { return 1; }\n", "kernel.cu", {})
              .starts_with("the module defines no kernel: kernel.cu has no __global__ function"));
  }
  SECTION("any kernel satisfies a module without an entry; the entry itself satisfies a task") {
    const std::vector<std::string> k = {"relu"};
    CHECK(missing_kernel_advice(tpl, "kernel.cu", k).empty());
    CHECK(missing_kernel_advice(tpl, "kernel.cu", k, "relu").empty());
  }
  SECTION("the entry exists with C++ linkage") {
    const std::vector<std::string> k = {"_Z7softmaxPKfPfi"};
    const std::string a =
        missing_kernel_advice("__global__ void softmax(const float*, float*, int) {}", "c.cu", k, "softmax");
    CHECK(a ==
          "the module defines the kernel 'softmax' with C++ linkage (symbol _Z7softmaxPKfPfi), so the harness "
          "cannot find it by name: declare it extern \"C\" __global__ void softmax(...)");
  }
  SECTION("the entry is a template") {
    const std::string a = missing_kernel_advice(tpl, "c.cu", {}, "relu");
    CHECK(a.find("'relu' (c.cu line 2) is a template") != std::string::npos);
    CHECK(a.find("make it a __device__ function template and define extern \"C\" __global__ void relu(...)") !=
          std::string::npos);
  }
  SECTION("a template under another name than the entry: call it from an extern \"C\" entry") {
    const std::string a = missing_kernel_advice(tpl, "c.cu", {}, "softmax");
    CHECK(a.starts_with(
        "the module defines no kernel named 'softmax'; declare it as extern \"C\" __global__ void softmax(...)"
        "; the kernel template 'relu' (c.cu line 2) is never instantiated"));
    CHECK(a.find("extern \"C\" __global__ void softmax(float* x, int n) { relu<float>(x, n); }") != std::string::npos);
  }
  SECTION("other kernels, named") {
    const std::vector<std::string> k = {"helper", "other"};
    CHECK(missing_kernel_advice("", "c.cu", k, "softmax") ==
          "the module defines no kernel named 'softmax' (it defines helper, other); declare it as extern \"C\" "
          "__global__ void softmax(...)");
  }
}

TEST_CASE("cli compile: --header ships a header, --default-device reaches NVRTC, and an empty module is explained",
          "[sandbox][cli][diagnostics]") {
  leap_test::TempDir dir;
  const std::string header = dir.write("sharedmem.h",
                                       "#pragma once\ntemplate <class T> struct SharedMemory;\n"
                                       "#define TILE 32\n")
                                 .string();
  const std::string kernel = dir.write("k.cu",
                                       "#include \"sharedmem.cuh\"\nextern \"C\" __global__ void k(float* x) "
                                       "{ x[threadIdx.x] = TILE; }\n")
                                 .string();
  const leap_test::CliRun ok =
      leap_test::run_cli("compile --json --no-cache --header sharedmem.cuh='" + header + "' '" + kernel + "'", dir);
  INFO(ok.out << ok.err);
  REQUIRE(ok.exit_code == 0);
  const json j = json::parse(ok.out);
  CHECK(j.at("status") == "ok");
  CHECK(j.at("kernels") == json::array({"k"}));
  CHECK_FALSE(j.contains("advice"));

  const leap_test::CliRun missing = leap_test::run_cli("compile --json --no-cache '" + kernel + "'", dir);
  CHECK(missing.exit_code == 1);
  CHECK(json::parse(missing.out)
            .at("log")
            .get<std::string>()
            .find("#include \"sharedmem.cuh\": not in the toolkit: inline it or ship it as a header") !=
        std::string::npos);

  const std::string evil_header = dir.write("evil.h", "#include </etc/passwd>\n").string();
  const leap_test::CliRun evil = leap_test::run_cli(
      "compile --json --no-cache --header sharedmem.cuh='" + evil_header + "' '" + kernel + "'", dir);
  CHECK(evil.exit_code == 1);
  CHECK(json::parse(evil.out).at("log").get<std::string>().find(
            "sharedmem.cuh(1): #include </etc/passwd>: outside the toolkit") != std::string::npos);
  CHECK(leap_test::run_cli("compile --header nonsense '" + kernel + "'", dir).exit_code == 2);
  CHECK(leap_test::run_cli("compile --header a.h='" + (dir.path / "none.h").string() + "' '" + kernel + "'", dir)
            .exit_code == 2);

  const std::string unannotated = dir.write("dd.cu",
                                            "float twice(float v) { return 2 * v; }\n"
                                            "extern \"C\" __global__ void k(float* x) { x[0] = twice(x[0]); }\n")
                                      .string();
  CHECK(leap_test::run_cli("compile --no-cache '" + unannotated + "'", dir).exit_code == 1);
  CHECK(leap_test::run_cli("compile --no-cache --default-device '" + unannotated + "'", dir).exit_code == 0);

  const std::string tpl = dir.write("tpl.cu", "template <typename T>\n__global__ void relu(T* x, int n) {}\n").string();
  const leap_test::CliRun empty = leap_test::run_cli("compile --no-cache '" + tpl + "'", dir);
  CHECK(empty.exit_code == 0);
  CHECK(empty.out.find("note: the module defines no kernel: the kernel template 'relu'") != std::string::npos);
  CHECK(empty.out.find("template __global__ void relu<float>(float* x, int n);") != std::string::npos);
}

TEST_CASE("cli serve: compile requests take headers, std, defines and default_device, and bad ones are named",
          "[sandbox][cli][diagnostics]") {
  leap_test::TempDir dir;
  const json requests[] = {
      {{"id", 1},
       {"op", "compile"},
       {"source", "#include \"tile.cuh\"\nextern \"C\" __global__ void k(float* x) { x[0] = N * TILE; }\n"},
       {"headers", {{"tile.cuh", "#pragma once\n#define TILE 16\n"}}},
       {"defines", {{"N", "4"}}},
       {"std", 20}},
      {{"id", 2},
       {"op", "compile"},
       {"source", "float f(float v) { return v; }\nextern \"C\" __global__ void k(float* x) { x[0] = f(M); }\n"},
       {"default_device", true},
       {"defines", json::array({"M=2.0f"})}},
      {{"id", 3}, {"op", "compile"}, {"source", "__global__ void k() {}\n"}, {"headers", {{"../escape.h", "x"}}}},
      {{"id", 4}, {"op", "compile"}, {"source", "__global__ void k() {}\n"}, {"headers", json::array({"x"})}},
      {{"id", 5}, {"op", "compile"}, {"source", "__global__ void k() {}\n"}, {"std", 15}},
      {{"id", 6}, {"op", "compile"}, {"source", "template <class T> __global__ void k(T* x) {}\n"}},
  };
  std::string input;
  for (const json& r : requests) input += r.dump() + "\n";
  const leap_test::CliRun run = leap_test::run_cli("serve", dir, input);
  REQUIRE(run.exit_code == 0);
  std::map<int, json> by_id;
  for (const json& line : leap_test::json_lines(run.out)) by_id[line.at("id").get<int>()] = line;
  REQUIRE(by_id.size() == 6);
  INFO(run.out);
  CHECK(by_id[1].at("result").at("status") == "ok");
  CHECK(by_id[1].at("result").at("kernels") == json::array({"k"}));
  CHECK(by_id[2].at("result").at("status") == "ok");
  CHECK(by_id[3].at("result").at("status") == "refused");
  CHECK(by_id[3].at("result").at("log").get<std::string>().find("shipped header name '../escape.h'") !=
        std::string::npos);
  CHECK(by_id[4].at("ok") == false);
  CHECK(by_id[4].at("error").get<std::string>().find("\"headers\" must be an object") != std::string::npos);
  CHECK(by_id[5].at("ok") == false);
  CHECK(by_id[5].at("error").get<std::string>().find("cxx_standard") != std::string::npos);
  CHECK(by_id[6].at("result").at("status") == "ok");
  CHECK(by_id[6].at("result").at("advice").get<std::string>().find("template __global__ void k<float>(float* x);") !=
        std::string::npos);
}

// The scanner reads a candidate's source, up to serve's 4 MiB: each shape below made the old scanner
// read to the end of the source once per template (or count lines from its start, or substitute a
// default into every use), minutes to an hour of CPU in the serve process at these sizes. Each must
// now take a pass, far within the bound, and give advice of a bounded size.
TEST_CASE("diagnostics: the advice scanner is linear in the templates a source holds, and its advice bounded",
          "[sandbox][diagnostics][scans]") {
  constexpr std::size_t k_size = 2u << 20;
  auto repeated = [](std::string_view head, std::string_view unit, std::string_view tail) {
    std::string s(head);
    while (s.size() < k_size) s += unit;
    return s + std::string(tail);
  };
  const std::string_view one_per_line = "template <class T> __global__ void k(T x);\n";
  struct Shape {
    const char* what;
    std::string source;
    std::size_t templates;  // kernel templates it holds
  };
  std::string long_default = "template <class T = ";
  for (int i = 0; i < 100000; ++i) long_default += "X";
  long_default += "> __global__ void uses(";
  while (long_default.size() < k_size) long_default += "T a, ";
  long_default += "T z) {}\n";
  const Shape shapes[] = {
      {"K template<...> lines in #if 0 (the issue's)", repeated("#if 0\n", "template<typename T>\n", "#endif\n"), 0},
      {"template< never closed", repeated("", "template<", ""), 0},
      {"templates that share one declaration head", repeated("", "template <class T> ", "__global__ void f(T x) {}\n"),
       1},
      {"kernel templates, each on its own line", repeated("", one_per_line, ""),
       (k_size + one_per_line.size() - 1) / one_per_line.size()},
      {"a default argument substituted into every parameter", long_default, 1},
  };
  for (const Shape& shape : shapes) {
    INFO(shape.what);
    CHECK(leap_test::finishes_within_cpu_seconds(10, [&] {
      const std::vector<KernelTemplate> t = kernel_templates(shape.source);
      const std::string advice = missing_kernel_advice(shape.source, "kernel.cu", {});
      for (const KernelTemplate& k : t) {
        if (k.instantiation.size() > 2048 || k.parameters.size() > 2048 || k.call.size() > 2048) return false;
      }
      return t.size() == shape.templates && advice.size() < 8192 &&
             (t.empty() || t.back().line == static_cast<int>(shape.templates));
    }));
  }
}

TEST_CASE("diagnostics: the advice's scan is charged to the compile's cpu_seconds", "[sandbox][diagnostics][scans]") {
  CompileResult r;
  r.status = CompileStatus::ok;
  r.kernels = std::vector<std::string>{};
  r.cpu_seconds = 0.25;
  std::string source = "#if 0\n";
  while (source.size() < (1u << 20)) source += "template<typename T>\n";
  source += "#endif\ntemplate <class T> __global__ void relu(T* x) {}\n";
  const std::string advice = missing_kernel_advice(r, source, "kernel.cu");
  CHECK(advice.find("the kernel template 'relu' (kernel.cu line ") != std::string::npos);
  CHECK(r.cpu_seconds > 0.25);  // the scan of a megabyte took CPU, and the result says so

  CompileResult none;  // no kernel list (no CUBIN, or not compiled): no advice, nothing charged
  none.status = CompileStatus::ok;
  CHECK(missing_kernel_advice(none, source, "kernel.cu").empty());
  CHECK(none.cpu_seconds == 0.0);
}

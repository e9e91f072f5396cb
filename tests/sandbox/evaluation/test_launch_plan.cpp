// SPDX-License-Identifier: Apache-2.0
// Launch plans declared in a candidate's source: the directive syntax and its errors, the limits
// against hostile sources, every rule checked at every size set of the task, the task's policy
// (fixed or bounded) in its spec, and arguments matched to the kernels' parameters as NVRTC's CUBIN
// declares them.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <leap/sandbox/compiler.hpp>
#include <leap/sandbox/launch_plan.hpp>
#include <leap/sandbox/task.hpp>
#include <random>
#include <string>
#include <vector>

#include "compile/elf_kernels.hpp"
#include "sum_task.hpp"
#include "test_support.hpp"

namespace sb = leap::sandbox;

namespace {

using leap_test::sum_task;

std::string parse_error(const std::string& source) { return sb::parse_launch_plan(source).error; }

std::string check_error(const std::string& source, const sb::TaskSpec& task = sum_task(),
                        const sb::PlanContext& context = {}) {
  const sb::PlanParse p = sb::parse_launch_plan(source);
  REQUIRE(p.ok());
  return sb::check_candidate_plan(p.plan, task, context).error;
}

constexpr const char* k_plan = R"(
#include <cuda_runtime.h>
// A two-pass sum.
// leap-scratch: partials float32 ceil_div(n, 256)
//leap-launch: partial_sums grid=ceil_div(n, 256) block=(256) shared=256 * 4 args=(x, partials, n)
   // leap-launch:   final_sum   grid=(1, 1)  block = 1024 args=(partials, out, n)
/* leap-launch: ignored in a block comment */
// leap-launched this kernel yesterday (prose, not a directive)
)";

}  // namespace

TEST_CASE("launch plans: the directives of a source, and nothing else", "[sandbox][plan]") {
  const sb::PlanParse p = sb::parse_launch_plan(k_plan);
  REQUIRE(p.ok());
  REQUIRE(p.plan.kernels.size() == 2);
  REQUIRE(p.plan.scratch.size() == 1);
  const sb::KernelLaunchDecl& a = p.plan.kernels[0];
  CHECK(a.kernel == "partial_sums");
  CHECK(a.line == 5);
  CHECK(a.grid[0] == "ceil_div(n, 256)");
  CHECK(a.grid[1] == "1");
  CHECK(a.block[0] == "256");
  CHECK(a.shared_bytes == "256 * 4");
  CHECK(a.args == std::vector<std::string>{"x", "partials", "n"});
  const sb::KernelLaunchDecl& b = p.plan.kernels[1];
  CHECK(b.kernel == "final_sum");
  CHECK(b.grid[1] == "1");
  CHECK(b.block[0] == "1024");  // "block = 1024": the value runs to the next key
  CHECK(p.plan.scratch[0].name == "partials");
  CHECK(p.plan.scratch[0].dtype == sb::DType::float32);
  CHECK(p.plan.scratch[0].count == "ceil_div(n, 256)");
  CHECK(p.plan.scratch[0].line == 4);

  // Canonical text, on the same lines, parses back to the same plan.
  const std::string text = sb::to_directives(p.plan);
  const sb::PlanParse back = sb::parse_launch_plan(text);
  REQUIRE(back.ok());
  CHECK(sb::to_directives(back.plan) == text);
  CHECK(back.plan.kernels[1].line == 6);
  CHECK_FALSE(back.plan.kernels[1].args->empty());

  // Default args: the task's parameters in order.
  const sb::PlanParse d = sb::parse_launch_plan("// leap-launch: sum grid=1 block=256\n");
  REQUIRE(d.ok());
  CHECK_FALSE(d.plan.kernels[0].args.has_value());
  const sb::ResolvedPlan r = sb::resolve_launch_plan(d.plan, sum_task(), {{"n", 10}}, sum_task().candidate_launch);
  REQUIRE(r.kernels[0].args.size() == 3);
  CHECK(r.kernels[0].args[2].name == "n");

  CHECK(sb::parse_launch_plan("extern \"C\" __global__ void k() {}\n").plan.empty());
}

TEST_CASE("launch plans: a malformed directive is an error with its line and what to write", "[sandbox][plan]") {
  CHECK(parse_error("\n// leap-launch: k block=1\n") == "line 2: grid= is missing (e.g. grid=ceil_div(n, 256))");
  CHECK(parse_error("// leap-launch: k grid=1\n") == "line 1: block= is missing (e.g. block=256)");
  CHECK(parse_error("// leap-launch: k gird=1 block=1\n") ==
        "line 1: unknown key \"gird\" (grid, block, shared or args)");
  CHECK(parse_error("// leap-launch: k grid=1 grid=2 block=1\n") == "line 1: grid= given twice");
  CHECK(parse_error("// leap-launch: k grid=(1, 2, 3, 4) block=1\n") ==
        "line 1: grid=\"(1, 2, 3, 4)\": more than 3 dimensions");
  CHECK(parse_error("// leap-launch: k grid=(n, ) block=1\n") == "line 1: grid=\"(n, )\": dimension 2 is empty");
  CHECK(parse_error("// leap-launch: k grid=(1 block=1\n") == "line 1: grid=: a '(' without its ')'");
  CHECK(parse_error("// leap-launch: k grid=1) block=1\n") == "line 1: grid=: a ')' without its '('");
  CHECK(parse_error("// leap-launch: k grid=1 block=1 args=(x, 2)\n") ==
        "line 1: args: \"2\" is not a name (a task parameter or a scratch buffer)");
  CHECK(parse_error("// leap-launch: k<int> grid=1 block=1\n") ==
        "line 1: kernel name \"k<int>\" is not an identifier (declare the kernel extern \"C\" __global__)");
  CHECK_THAT(parse_error("// leap-lanch: k grid=1 block=1\n"),
             Catch::StartsWith("line 1: unknown directive \"leap-lanch\": write `// leap-launch:"));
  CHECK(parse_error("// leap-scratch: p float64 n\n// leap-launch: k grid=1 block=1\n") ==
        "line 1: unknown dtype \"float64\" (float32, float16, bfloat16, int32 or int8)");
  CHECK_THAT(parse_error("// leap-scratch: p float32\n"),
             Catch::StartsWith("line 1: expected `// leap-scratch: NAME DTYPE COUNT`"));
  // Bytes no size expression holds are named at once (a fuzzer's find: "block=,\0\0\0shared=...").
  constexpr char k_nul[] = "// leap-launch: k grid=1 block=,\0\0\0shared=256 * 4 args=(x)\n";
  CHECK(parse_error(std::string(k_nul, sizeof k_nul - 1)) ==
        "line 1: block=: byte 0 has no place in a size expression (names, integers, + - * / %, parentheses and "
        "ceil_div, min, "
        "max, pow2_ceil)");
  CHECK_THAT(parse_error("// leap-launch: k grid=1 block=1 shared=n; \n"),
             Catch::Contains("shared=: ';' has no place"));
  CHECK_THAT(parse_error("// leap-scratch: p int32 n#2\n// leap-launch: k grid=1 block=1\n"),
             Catch::Contains("COUNT: '#' has no place"));
  CHECK(parse_error("// leap-launch: k grid=, block=1\n") == "line 1: grid=\",\": dimension 1 is empty");
  // Several dimensions without the parentheses read the same as with them.
  const sb::PlanParse bare = sb::parse_launch_plan("// leap-launch: k grid=ceil_div(n, 32), rows block=32, 8\n");
  REQUIRE(bare.ok());
  CHECK(bare.plan.kernels[0].grid[0] == "ceil_div(n, 32)");
  CHECK(bare.plan.kernels[0].grid[1] == "rows");
  CHECK(bare.plan.kernels[0].block[1] == "8");
  CHECK(sb::to_directives(bare.plan) == "// leap-launch: k grid=(ceil_div(n, 32), rows) block=(32, 8)\n");
  CHECK(parse_error("// leap-scratch: p float32 n\n") ==
        "line 1: leap-scratch without any leap-launch line (scratch is passed to kernels through args=)");
}

TEST_CASE("launch plans: hostile sources are refused by limits, not by time or memory", "[sandbox][plan]") {
  // A directive line past the length limit.
  const std::string long_line = "// leap-launch: k grid=" + std::string(5000, '1') + " block=1\n";
  CHECK_THAT(parse_error(long_line), Catch::Contains("over the limit of 2048"));
  // More launch lines than any task may allow.
  std::string many;
  for (int i = 0; i < 17; ++i) many += "// leap-launch: k grid=1 block=1\n";
  CHECK(parse_error(many) == "line 17: more than 16 leap-launch lines");
  std::string scratch;
  for (int i = 0; i < 17; ++i) scratch += "// leap-scratch: s" + std::to_string(i) + " int32 1\n";
  CHECK(parse_error(scratch) == "line 17: more than 16 leap-scratch lines");
  // Deep nesting: size_expr's depth limit, reported as a plan error.
  const std::string deep =
      "// leap-launch: sum grid=" + std::string(100, '(') + "1" + std::string(100, ')') + " block=1\n";
  CHECK_THAT(check_error(deep), Catch::Contains("nested deeper than the limit of 64"));
  // A megabyte of almost-directives and binary junk: still one answer, quickly.
  std::string junk;
  for (int i = 0; i < 20000; ++i) junk += "// leap-\x01\xff( grid=((((\n// leap-launched\n";
  CHECK(sb::parse_launch_plan(junk).ok());
  CHECK(sb::parse_launch_plan(junk + "// leap-launch: k grid=((((\n").error ==
        "line 40001: grid=: a '(' without its ')'");
}

TEST_CASE("launch plans: every limit is checked at every size set, before any launch", "[sandbox][plan]") {
  const std::string scratch = "// leap-scratch: partials float32 ceil_div(n, 256)\n";
  // Block dimensions and their product.
  CHECK(check_error("// leap-launch: sum grid=1 block=(2048)\n") ==
        "line 1, kernel 'sum': block x \"2048\" is 2048, over the limit of 1024 threads in x (at sizes {n=70000000})");
  CHECK_THAT(check_error("// leap-launch: sum grid=1 block=(1, 1, 65)\n"),
             Catch::Contains("over the limit of 64 threads in z"));
  CHECK_THAT(check_error("// leap-launch: sum grid=1 block=(64, 32)\n"),
             Catch::Contains("block=(64, 32) is 2048 threads per block, over the limit of 1024"));
  CHECK_THAT(check_error("// leap-launch: sum grid=1 block=0\n"), Catch::Contains("block x \"0\" is 0, below 1"));
  // Grid: x up to 2^31-1, y and z up to 65535; the check sets count (n = 70000000 here).
  CHECK_THAT(check_error("// leap-launch: sum grid=(1, n) block=1\n"),
             Catch::Contains("grid y \"n\" is 70000000, over the limit of 65535 blocks in y (at sizes {n=70000000})"));
  CHECK(check_error("// leap-launch: sum grid=n block=1\n").empty());
  CHECK_THAT(check_error("// leap-launch: sum grid=n*n block=1\n"),
             Catch::Contains("over the limit of 2147483647 blocks in x"));
  CHECK_THAT(check_error("// leap-launch: sum grid=n*n*n block=1\n"),
             Catch::Contains("grid x: expression \"n*n*n\": overflow"));
  CHECK_THAT(check_error("// leap-launch: sum grid=ceil_div(n, m) block=1\n"), Catch::Contains("unknown size 'm'"));
  // Dynamic shared memory: the task's bound (48 KiB by default), then the device's when known.
  CHECK_THAT(check_error("// leap-launch: sum grid=1 block=1 shared=49153\n"),
             Catch::Contains("shared \"49153\" is 49153, over this task's limit of 49152 bytes"));
  const sb::TaskSpec roomy = sum_task(R"("candidate_launch": {"allowed": true, "max_shared_bytes": 232448},)");
  CHECK(check_error("// leap-launch: sum grid=1 block=1 shared=200000\n", roomy).empty());
  CHECK_THAT(check_error("// leap-launch: sum grid=1 block=1 shared=200000\n", roomy, {nullptr, 101376}),
             Catch::Contains("over the device's limit of 101376 bytes"));
  // Scratch: within the task's bound, with a name of its own, used by name.
  CHECK_THAT(check_error("// leap-scratch: partials float32 n\n// leap-launch: sum grid=1 block=1\n"),
             Catch::Contains("scratch 'partials': 70000000 elements of float32 bring the plan's scratch over this "
                             "task's limit of 67108864 bytes"));
  CHECK_THAT(check_error("// leap-scratch: x float32 1\n// leap-launch: sum grid=1 block=1\n"),
             Catch::Contains("the name is taken"));
  CHECK_THAT(check_error("// leap-scratch: p int32 n - n\n// leap-launch: sum grid=1 block=1\n"),
             Catch::Contains("is 0, not positive"));
  CHECK(check_error(scratch + "// leap-launch: sum grid=1 block=1 args=(x, partials, n)\n").empty());
  CHECK(check_error(scratch + "// leap-launch: sum grid=1 block=1 args=(x, partial, n)\n") ==
        "line 2, kernel 'sum': args: unknown name 'partial' (the task's parameters and the plan's scratch: x, out, n, "
        "partials)");
  // Kernels: within the task's count, and in the module.
  const sb::TaskSpec one = sum_task(R"("candidate_launch": {"allowed": true, "max_kernels": 1},)");
  CHECK(check_error("// leap-launch: sum grid=1 block=1\n// leap-launch: sum grid=1 block=1\n", one) ==
        "2 kernels, over this task's limit of 1 (fuse some of them)");
  const std::vector<std::string> module{"partial_sums", "sum"};
  CHECK(check_error("// leap-launch: partial_sums grid=1 block=1\n// leap-launch: final_sum grid=1 block=1\n",
                    sum_task(), {&module, 0}) ==
        "line 2, kernel 'final_sum': no such kernel in the module (it has: partial_sums, sum); declare it extern \"C\" "
        "__global__, "
        "or instantiate a template explicitly");
  // Threads per block: the task may bound it below the hardware.
  const sb::TaskSpec narrow = sum_task(R"("candidate_launch": {"allowed": true, "max_threads_per_block": 256},)");
  CHECK_THAT(check_error("// leap-launch: sum grid=1 block=512\n", narrow),
             Catch::Contains("512 threads per block, over this task's limit of 256"));

  // A fixed task refuses any plan, saying which launch it uses.
  const sb::PlanParse p = sb::parse_launch_plan("// leap-launch: sum grid=1 block=32\n");
  const sb::PlanCheck refused = sb::check_candidate_plan(p.plan, sum_task(""));
  CHECK(refused.status == sb::PlanStatus::refused);
  CHECK(refused.error ==
        "task 'sum' fixes its launch (leap-launch: sum grid=(1) block=(256)); remove the leap-launch and leap-scratch "
        "lines and write "
        "the kernel for that launch");

  // A valid plan: resolved at the timing sizes.
  const sb::PlanCheck ok = sb::check_candidate_plan(
      sb::parse_launch_plan(scratch +
                            "// leap-launch: sum grid=ceil_div(n, 256) block=256 shared=1024 args=(x, partials, n)\n")
          .plan,
      sum_task());
  REQUIRE(ok.status == sb::PlanStatus::ok);
  REQUIRE(ok.resolved);
  CHECK(ok.resolved->kernels[0].shape.grid[0] == 16);
  CHECK(ok.resolved->scratch[0].count == 16);
  CHECK(ok.resolved->scratch_bytes == 64);
  CHECK(sb::to_text(*ok.resolved) == "sum grid=(16) block=(256) shared=1024; scratch partials: 16 x float32");
}

TEST_CASE("launch plans: every broken directive in one answer, each once", "[sandbox][plan]") {
  const std::vector<std::string> module{"partial_sums", "sum"};
  // Three directives break a rule each: a scratch count, a block size, a kernel the module lacks;
  // the grid of the first kernel breaks only at n = 70 000 000 and its block at every size set, yet
  // that directive is told once, with its first problem.
  const std::string source =
      "// leap-scratch: partials float32 n - n\n"
      "// leap-launch: partial_sums grid=n*n block=2048\n"
      "// leap-launch: final_sum grid=1 block=32\n"
      "// leap-launch: sum grid=1 block=32\n";
  const std::string error = check_error(source, sum_task(), {&module, 0});
  INFO(error);
  CHECK_THAT(error, Catch::Contains("line 1, scratch 'partials': count \"n - n\" is 0, not positive"));
  CHECK_THAT(error, Catch::Contains("line 2, kernel 'partial_sums': "));
  CHECK_THAT(error, Catch::Contains("line 3, kernel 'final_sum': no such kernel in the module"));
  CHECK(std::count(error.begin(), error.end(), '\n') == 2);  // three problems, one per line
  CHECK(error.find("line 4") == std::string::npos);          // the valid directive is not mentioned

  // The same problems reach eval's feedback and the runner as one LaunchPlanError.
  const sb::PlanParse p = sb::parse_launch_plan(source);
  REQUIRE(p.ok());
  try {
    sb::resolve_launch_plan(p.plan, sum_task(), sb::Sizes{{"n", 5}}, sum_task().candidate_launch, {&module, 0});
    FAIL("the plan resolved");
  } catch (const sb::LaunchPlanError& e) {
    CHECK(e.problems().size() == 3);
    CHECK(std::string(e.what()) == e.problems()[0] + "\n" + e.problems()[1] + "\n" + e.problems()[2]);
  }
}

TEST_CASE("launch plans: a task's policy in its spec, checked and round-tripped", "[sandbox][plan][task]") {
  const sb::TaskSpec t = sum_task(
      R"("candidate_launch": {"allowed": true, "max_kernels": 2, "max_threads_per_block": 512, "max_shared_bytes": 65536, "max_scratch_bytes": 1024},)");
  CHECK(t.candidate_launch.allowed);
  CHECK(t.candidate_launch.max_kernels == 2);
  CHECK(t.candidate_launch.max_threads_per_block == 512);
  CHECK(t.candidate_launch.max_shared_bytes == 65536);
  CHECK(t.candidate_launch.max_scratch_bytes == 1024);
  const sb::TaskSpec back = sb::parse_task(sb::task_to_json(t));
  CHECK(sb::task_to_json(back) == sb::task_to_json(t));
  CHECK(back.candidate_launch.max_scratch_bytes == 1024);
  CHECK_FALSE(sum_task("").candidate_launch.allowed);  // absent: the task's launch is fixed

  auto error_of = [](const std::string& policy) -> std::string {
    try {
      (void)sum_task(policy);
    } catch (const sb::TaskError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(error_of(R"("candidate_launch": {"allowed": true, "max_kernel": 2},)") ==
        "task 'sum': candidate_launch.max_kernel: unknown key");
  CHECK(error_of(R"("candidate_launch": {"allowed": "yes"},)") ==
        "task 'sum': candidate_launch.allowed: expected true or false, got \"yes\"");
  CHECK(error_of(R"("candidate_launch": {"max_kernels": 17},)") ==
        "task 'sum': candidate_launch.max_kernels: expected an integer in [1, 16], got 17");
  CHECK(error_of(R"("candidate_launch": {"max_threads_per_block": 2048},)") ==
        "task 'sum': candidate_launch.max_threads_per_block: expected an integer in [1, 1024], got 2048");
  CHECK(error_of(R"("candidate_launch": {"max_shared_bytes": 300000},)") ==
        "task 'sum': candidate_launch.max_shared_bytes: expected an integer in [0, 232448], got 300000");
  CHECK(error_of(R"("candidate_launch": {"max_scratch_bytes": -1},)") ==
        "task 'sum': candidate_launch.max_scratch_bytes: expected an integer in [0, 4294967296], got -1");
}

TEST_CASE("launch plans: arguments match the kernel's parameters in count and in bytes, one by one",
          "[sandbox][plan]") {
  // partial_sums(const float*, float*, int) and final_sum(const float*, float*, int), as the module says.
  const std::vector<sb::KernelParam> ppi{{0, 8}, {8, 8}, {16, 4}};
  sb::KernelParams params{{"partial_sums", ppi}, {"final_sum", ppi}};
  const sb::PlanContext context{nullptr, 0, &params};
  CHECK(check_error(k_plan, sum_task(), context) == "");

  params["final_sum"] = {{0, 8}, {8, 8}};
  CHECK(check_error(k_plan, sum_task(), context) ==
        "line 6, kernel 'final_sum': the kernel declares 2 parameters; the plan passes 3 (partials, out, n): remove "
        "the extra argument from "
        "args= or add the parameter");
  params["final_sum"] = std::vector<sb::KernelParam>(102, {0, 8});
  CHECK(check_error(k_plan, sum_task(), context) ==
        "line 6, kernel 'final_sum': the kernel declares 102 parameters; the plan passes 3 (partials, out, n): add the "
        "missing argument to "
        "args= or remove the parameter");
  params["final_sum"] = {{0, 8}, {8, 8}, {16, 8}};
  CHECK(check_error(k_plan, sum_task(), context) ==
        "line 6, kernel 'final_sum': parameter 3 of 3 is 8 bytes; the plan passes 'n' (an int32 scalar, 4 bytes): "
        "declare it `int` or "
        "pass an argument of its size");
  params["final_sum"] = {{0, 8}, {8, 4}, {16, 4}};
  CHECK(check_error(k_plan, sum_task(), context) ==
        "line 6, kernel 'final_sum': parameter 2 of 3 is 4 bytes; the plan passes 'out' (a float32 buffer, passed as "
        "an 8-byte pointer): "
        "declare it `float*` or pass an argument of its size");
  params["final_sum"] = {{0, 1}, {8, 8}, {16, 4}};
  CHECK_THAT(
      check_error(k_plan, sum_task(), context),
      Catch::StartsWith(
          "line 6, kernel 'final_sum': parameter 1 of 3 is 1 byte; the plan passes 'partials' (float32 scratch"));
  // Both kernels wrong: both told, each once (the check runs at every size set).
  params["partial_sums"] = {};
  const std::string both = check_error(k_plan, sum_task(), context);
  CHECK_THAT(
      both, Catch::StartsWith(
                "line 5, kernel 'partial_sums': the kernel declares 0 parameters; the plan passes 3 (x, partials, n)"));
  CHECK(std::count(both.begin(), both.end(), '\n') == 1);
  // A kernel the module has no parameter account of: refused, not guessed.
  params.erase("final_sum");
  params["partial_sums"] = ppi;
  CHECK_THAT(check_error(k_plan, sum_task(), context),
             Catch::StartsWith(
                 "line 6, kernel 'final_sum': the compiled module does not say which parameters the kernel takes"));

  // The task's own launch: the signature is what to write.
  const sb::TaskSpec task = sum_task();
  sb::KernelParams one{{"sum", {{0, 8}, {8, 8}}}};
  try {
    sb::resolve_launch_plan(sb::task_launch_plan(task), task, task.sizes, sb::k_task_launch_bounds, {nullptr, 0, &one});
    FAIL("a launch of 3 arguments to a kernel of 2 parameters was accepted");
  } catch (const sb::LaunchPlanError& e) {
    CHECK(std::string(e.what()) ==
          "the task's launch, kernel 'sum': the kernel declares 2 parameters; the task passes 3 (x, out, n): declare "
          "the kernel with the "
          "task's signature: (const float* x, float* out, int n)");
  }
  one["sum"] = {{0, 8}, {8, 8}, {16, 4}};
  CHECK_NOTHROW(sb::resolve_launch_plan(sb::task_launch_plan(task), task, task.sizes, sb::k_task_launch_bounds,
                                        {nullptr, 0, &one}));
}

namespace {

sb::CompileResult compile_cubin(const std::string& source) { return leap_test::compile_trusted(source, "sm_90"); }

// Kernels of every parameter kind a candidate may declare, compiled by NVRTC.
constexpr const char* k_param_kernels = R"(
struct S24 { double a, b, c; };
struct __align__(16) S20 { int a[5]; };
struct Big { int a[5000]; };
extern "C" __global__ void mix(char c, short s, int i, float f, double d, float* p, S24 st, int last) {
  if (i < 0) p[0] = c + s + f + d + st.a + last;
}
extern "C" __global__ void none() {}
extern "C" __global__ void unused(float* a, int b, double c) {}
extern "C" __global__ void aligned(char a, S20 s, char b) {}
extern "C" __global__ void big(Big b, int n) {}
template <int N> __global__ void tk(float* p) { p[0] = N; }
template __global__ void tk<3>(float*);
__device__ __noinline__ int helper(int x) { return x * 3; }
extern "C" __global__ void calls(int* p, int n) { p[0] = helper(n); }
)";

}  // namespace

TEST_CASE("launch plans: each kernel's parameters are read from the CUBIN NVRTC makes", "[sandbox][plan][kernels]") {
  const sb::CompileResult r = compile_cubin(k_param_kernels);
  INFO(r.log);
  REQUIRE(r.ok());
  const std::optional<sb::KernelParams> params = sb::detail::cubin_kernel_params(r.cubin);
  REQUIRE(params.has_value());
  using P = std::vector<sb::KernelParam>;
  // Every kernel, and only kernels (the device function has no parameter block of its own).
  CHECK(params->size() == 7);
  CHECK(params->count("helper") == 0);
  // char 1, short 2, int 4, float 4, double 8, pointer 8, a 24-byte struct, int: each at its alignment.
  CHECK(params->at("mix") == P{{0, 1}, {2, 2}, {4, 4}, {8, 4}, {16, 8}, {24, 8}, {32, 24}, {56, 4}});
  CHECK(params->at("none").empty());
  CHECK(params->at("unused") == P{{0, 8}, {8, 4}, {16, 8}});  // unused parameters are still parameters
  CHECK(params->at("aligned") == P{{0, 1}, {16, 32}, {48, 1}});
  CHECK(params->at("big") == P{{0, 20000}, {20000, 4}});  // large blocks use the second record format
  CHECK(params->at("_Z2tkILi3EEvPf") == P{{0, 8}});
  CHECK(params->at("calls") == P{{0, 8}, {8, 4}});

  // A kernel of 102 pointers: all 102.
  std::string many = "extern \"C\" __global__ void many(";
  for (int i = 0; i < 102; ++i) many += (i > 0 ? ", float* p" : "float* p") + std::to_string(i);
  many += ") { p0[0] = 1; }";
  const sb::CompileResult m = compile_cubin(many);
  REQUIRE(m.ok());
  const std::optional<sb::KernelParams> mp = sb::detail::cubin_kernel_params(m.cubin);
  REQUIRE(mp.has_value());
  REQUIRE(mp->at("many").size() == 102);
  CHECK(mp->at("many").back() == sb::KernelParam{808, 8});

  CHECK_FALSE(sb::detail::cubin_kernel_params("").has_value());
  CHECK_FALSE(sb::detail::cubin_kernel_params("not an elf file at all, but long enough to hold a header ...........")
                  .has_value());
}

TEST_CASE("launch plans: the CUBIN parameter reader survives every truncation and corruption",
          "[sandbox][plan][kernels]") {
  const sb::CompileResult r = compile_cubin(k_param_kernels);
  REQUIRE(r.ok());
  const std::string cubin = r.cubin;
  const sb::KernelParams good = *sb::detail::cubin_kernel_params(cubin);
  for (std::size_t n = 0; n < cubin.size(); n += 5)
    (void)sb::detail::cubin_kernel_params(std::string_view(cubin).substr(0, n));

  // Every byte of every .nv.info.<kernel> section flipped in turn: the kernel is left out, or its
  // parameters come back as many as they are and consistent (each non-empty, after the one before,
  // the last ending the block). A flip in a field the reader does not use (a record's index, flag
  // bits, another attribute) changes nothing; one in an ordinal, a record's framing or a total
  // breaks the layout's consistency. (A size or offset moved within the padding between two
  // parameters stays consistent: the bytes come from NVRTC, not from the candidate, so the reader
  // checks consistency and bounds, not intent.)
  auto consistent = [](const std::vector<sb::KernelParam>& params) {
    std::uint64_t end = 0;
    for (const sb::KernelParam& p : params) {
      if (p.size == 0 || p.offset < end) return false;
      end = std::uint64_t{p.offset} + p.size;
    }
    return true;
  };
  std::size_t changed = 0;
  std::size_t sections = 0, left_out = 0;
  for (const auto& [kernel, layout] : good) {
    const std::string name = ".nv.info." + kernel + std::string(1, '\0');
    // The section's bytes: find its header through its name in the section-name table.
    const std::size_t name_at = cubin.find(name);
    REQUIRE(name_at != std::string::npos);
    std::uint64_t shoff = 0;
    std::uint16_t shnum = 0, shstrndx = 0;
    std::memcpy(&shoff, cubin.data() + 0x28, 8);
    std::memcpy(&shnum, cubin.data() + 0x3C, 2);
    std::memcpy(&shstrndx, cubin.data() + 0x3E, 2);
    std::uint64_t names_offset = 0;
    std::memcpy(&names_offset, cubin.data() + shoff + 64 * shstrndx + 24, 8);
    std::uint64_t offset = 0, size = 0;
    for (std::uint16_t i = 0; i < shnum; ++i) {
      std::uint32_t sh_name = 0;
      std::memcpy(&sh_name, cubin.data() + shoff + 64 * i, 4);
      if (names_offset + sh_name != name_at) continue;
      std::memcpy(&offset, cubin.data() + shoff + 64 * i + 24, 8);
      std::memcpy(&size, cubin.data() + shoff + 64 * i + 32, 8);
    }
    REQUIRE(size > 0);
    ++sections;
    for (std::uint64_t b = 0; b < size; ++b) {
      for (const unsigned char flip : {0x01, 0x10, 0x80, 0xff}) {
        std::string bad = cubin;
        bad[offset + b] = static_cast<char>(static_cast<unsigned char>(bad[offset + b]) ^ flip);
        const std::optional<sb::KernelParams> p = sb::detail::cubin_kernel_params(bad);
        REQUIRE(p.has_value());
        const auto it = p->find(kernel);
        if (it == p->end()) {
          ++left_out;
          continue;
        }
        INFO(kernel << " byte " << b << " ^ " << int(flip));
        CHECK(it->second.size() == layout.size());
        CHECK(consistent(it->second));
        changed += it->second == layout ? 0 : 1;
      }
    }
  }
  CHECK(sections == good.size());
  INFO("left out " << left_out << ", changed " << changed);
  CHECK(left_out > 10 * changed);  // nearly every flip that matters is caught

  // Random corruption anywhere: a result or nullopt, never a crash (the fuzz harness goes further).
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bad = cubin;
    for (int k = 0; k < 4; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
    (void)sb::detail::cubin_kernel_params(bad);
  }
}

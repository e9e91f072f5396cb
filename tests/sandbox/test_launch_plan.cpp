// SPDX-License-Identifier: Apache-2.0
// Launch plans declared in a candidate's source: the directive syntax and its errors, the limits
// against hostile sources, every rule checked at every size set of the task, and the task's policy
// (fixed or bounded) in its spec.
#include <algorithm>
#include <catch2/catch.hpp>
#include <leap/sandbox/launch_plan.hpp>
#include <leap/sandbox/task.hpp>
#include <string>
#include <vector>

#include "sum_task.hpp"

namespace sb = leap::sandbox;

namespace {

using leap_test::sum_task;

std::string parse_error(const std::string& source) { return sb::parse_launch_plan(source).error; }

std::string check_error(const std::string& source, const sb::TaskSpec& task = sum_task(), const sb::PlanContext& context = {}) {
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
  CHECK(parse_error("// leap-launch: k gird=1 block=1\n") == "line 1: unknown key \"gird\" (grid, block, shared or args)");
  CHECK(parse_error("// leap-launch: k grid=1 grid=2 block=1\n") == "line 1: grid= given twice");
  CHECK(parse_error("// leap-launch: k grid=(1, 2, 3, 4) block=1\n") == "line 1: grid=\"(1, 2, 3, 4)\": more than 3 dimensions");
  CHECK(parse_error("// leap-launch: k grid=(n, ) block=1\n") == "line 1: grid=\"(n, )\": dimension 2 is empty");
  CHECK(parse_error("// leap-launch: k grid=(1 block=1\n") == "line 1: grid=: a '(' without its ')'");
  CHECK(parse_error("// leap-launch: k grid=1) block=1\n") == "line 1: grid=: a ')' without its '('");
  CHECK(parse_error("// leap-launch: k grid=1 block=1 args=(x, 2)\n") ==
        "line 1: args: \"2\" is not a name (a task parameter or a scratch buffer)");
  CHECK(parse_error("// leap-launch: k<int> grid=1 block=1\n") ==
        "line 1: kernel name \"k<int>\" is not an identifier (declare the kernel extern \"C\" __global__)");
  CHECK_THAT(parse_error("// leap-lanch: k grid=1 block=1\n"), Catch::StartsWith("line 1: unknown directive \"leap-lanch\": write `// leap-launch:"));
  CHECK(parse_error("// leap-scratch: p float64 n\n// leap-launch: k grid=1 block=1\n") ==
        "line 1: unknown dtype \"float64\" (float32, float16, bfloat16 or int32)");
  CHECK_THAT(parse_error("// leap-scratch: p float32\n"), Catch::StartsWith("line 1: expected `// leap-scratch: NAME DTYPE COUNT`"));
  // Bytes no size expression holds are named at once (a fuzzer's find: "block=,\0\0\0shared=...").
  constexpr char k_nul[] = "// leap-launch: k grid=1 block=,\0\0\0shared=256 * 4 args=(x)\n";
  CHECK(parse_error(std::string(k_nul, sizeof k_nul - 1)) ==
        "line 1: block=: byte 0 has no place in a size expression (names, integers, + - * / %, parentheses and ceil_div, min, "
        "max, pow2_ceil)");
  CHECK_THAT(parse_error("// leap-launch: k grid=1 block=1 shared=n; \n"), Catch::Contains("shared=: ';' has no place"));
  CHECK_THAT(parse_error("// leap-scratch: p int32 n#2\n// leap-launch: k grid=1 block=1\n"), Catch::Contains("COUNT: '#' has no place"));
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
  const std::string deep = "// leap-launch: sum grid=" + std::string(100, '(') + "1" + std::string(100, ')') + " block=1\n";
  CHECK_THAT(check_error(deep), Catch::Contains("nested deeper than the limit of 64"));
  // A megabyte of almost-directives and binary junk: still one answer, quickly.
  std::string junk;
  for (int i = 0; i < 20000; ++i) junk += "// leap-\x01\xff( grid=((((\n// leap-launched\n";
  CHECK(sb::parse_launch_plan(junk).ok());
  CHECK(sb::parse_launch_plan(junk + "// leap-launch: k grid=((((\n").error == "line 40001: grid=: a '(' without its ')'");
}

TEST_CASE("launch plans: every limit is checked at every size set, before any launch", "[sandbox][plan]") {
  const std::string scratch = "// leap-scratch: partials float32 ceil_div(n, 256)\n";
  // Block dimensions and their product.
  CHECK(check_error("// leap-launch: sum grid=1 block=(2048)\n") ==
        "line 1, kernel 'sum': block x \"2048\" is 2048, over the limit of 1024 threads in x (at sizes {n=70000000})");
  CHECK_THAT(check_error("// leap-launch: sum grid=1 block=(1, 1, 65)\n"), Catch::Contains("over the limit of 64 threads in z"));
  CHECK_THAT(check_error("// leap-launch: sum grid=1 block=(64, 32)\n"),
             Catch::Contains("block=(64, 32) is 2048 threads per block, over the limit of 1024"));
  CHECK_THAT(check_error("// leap-launch: sum grid=1 block=0\n"), Catch::Contains("block x \"0\" is 0, below 1"));
  // Grid: x up to 2^31-1, y and z up to 65535; the check sets count (n = 70000000 here).
  CHECK_THAT(check_error("// leap-launch: sum grid=(1, n) block=1\n"),
             Catch::Contains("grid y \"n\" is 70000000, over the limit of 65535 blocks in y (at sizes {n=70000000})"));
  CHECK(check_error("// leap-launch: sum grid=n block=1\n").empty());
  CHECK_THAT(check_error("// leap-launch: sum grid=n*n block=1\n"), Catch::Contains("over the limit of 2147483647 blocks in x"));
  CHECK_THAT(check_error("// leap-launch: sum grid=n*n*n block=1\n"), Catch::Contains("grid x: expression \"n*n*n\": overflow"));
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
             Catch::Contains("scratch 'partials': 70000000 elements of float32 bring the plan's scratch over this task's limit of 67108864 bytes"));
  CHECK_THAT(check_error("// leap-scratch: x float32 1\n// leap-launch: sum grid=1 block=1\n"), Catch::Contains("the name is taken"));
  CHECK_THAT(check_error("// leap-scratch: p int32 n - n\n// leap-launch: sum grid=1 block=1\n"), Catch::Contains("is 0, not positive"));
  CHECK(check_error(scratch + "// leap-launch: sum grid=1 block=1 args=(x, partials, n)\n").empty());
  CHECK(check_error(scratch + "// leap-launch: sum grid=1 block=1 args=(x, partial, n)\n") ==
        "line 2, kernel 'sum': args: unknown name 'partial' (the task's parameters and the plan's scratch: x, out, n, partials)");
  // Kernels: within the task's count, and in the module.
  const sb::TaskSpec one = sum_task(R"("candidate_launch": {"allowed": true, "max_kernels": 1},)");
  CHECK(check_error("// leap-launch: sum grid=1 block=1\n// leap-launch: sum grid=1 block=1\n", one) ==
        "2 kernels, over this task's limit of 1 (fuse some of them)");
  const std::vector<std::string> module{"partial_sums", "sum"};
  CHECK(check_error("// leap-launch: partial_sums grid=1 block=1\n// leap-launch: final_sum grid=1 block=1\n", sum_task(), {&module, 0}) ==
        "line 2, kernel 'final_sum': no such kernel in the module (it has: partial_sums, sum); declare it extern \"C\" __global__, "
        "or instantiate a template explicitly");
  // Threads per block: the task may bound it below the hardware.
  const sb::TaskSpec narrow = sum_task(R"("candidate_launch": {"allowed": true, "max_threads_per_block": 256},)");
  CHECK_THAT(check_error("// leap-launch: sum grid=1 block=512\n", narrow), Catch::Contains("512 threads per block, over this task's limit of 256"));

  // A fixed task refuses any plan, saying which launch it uses.
  const sb::PlanParse p = sb::parse_launch_plan("// leap-launch: sum grid=1 block=32\n");
  const sb::PlanCheck refused = sb::check_candidate_plan(p.plan, sum_task(""));
  CHECK(refused.status == sb::PlanStatus::refused);
  CHECK(refused.error ==
        "task 'sum' fixes its launch (leap-launch: sum grid=(1) block=(256)); remove the leap-launch and leap-scratch lines and write "
        "the kernel for that launch");

  // A valid plan: resolved at the timing sizes.
  const sb::PlanCheck ok = sb::check_candidate_plan(sb::parse_launch_plan(scratch + "// leap-launch: sum grid=ceil_div(n, 256) block=256 shared=1024 args=(x, partials, n)\n").plan,
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
  CHECK(error.find("line 4") == std::string::npos);            // the valid directive is not mentioned

  // The same problems reach eval's feedback and the worker as one LaunchPlanError.
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
  const sb::TaskSpec t = sum_task(R"("candidate_launch": {"allowed": true, "max_kernels": 2, "max_threads_per_block": 512, "max_shared_bytes": 65536, "max_scratch_bytes": 1024},)");
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
  CHECK(error_of(R"("candidate_launch": {"allowed": true, "max_kernel": 2},)") == "task 'sum': candidate_launch.max_kernel: unknown key");
  CHECK(error_of(R"("candidate_launch": {"allowed": "yes"},)") == "task 'sum': candidate_launch.allowed: expected true or false, got \"yes\"");
  CHECK(error_of(R"("candidate_launch": {"max_kernels": 17},)") == "task 'sum': candidate_launch.max_kernels: expected an integer in [1, 16], got 17");
  CHECK(error_of(R"("candidate_launch": {"max_threads_per_block": 2048},)") ==
        "task 'sum': candidate_launch.max_threads_per_block: expected an integer in [1, 1024], got 2048");
  CHECK(error_of(R"("candidate_launch": {"max_shared_bytes": 300000},)") ==
        "task 'sum': candidate_launch.max_shared_bytes: expected an integer in [0, 232448], got 300000");
  CHECK(error_of(R"("candidate_launch": {"max_scratch_bytes": -1},)") ==
        "task 'sum': candidate_launch.max_scratch_bytes: expected an integer in [0, 4294967296], got -1");
}


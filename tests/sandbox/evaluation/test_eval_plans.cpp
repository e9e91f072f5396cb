// SPDX-License-Identifier: Apache-2.0
// Launch plans through eval without a GPU: a real two-kernel module compiled by NVRTC has its plan
// checked against the module's symbol table and the task's policy and reported before the no_gpu
// status; an invalid or refused plan is a compile_error with its own plan status; serve's eval
// reports the same and takes headers; the built-in tasks say whether and how a plan may be declared;
// arguments that differ from the kernels' parameters in the CUBIN, in count or in size, are an
// invalid plan, for a declared plan and for the task's own launch alike.
#include <catch2/catch.hpp>
#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/compiler.hpp>
#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/launch_plan.hpp>
#include <leap/sandbox/request_handler.hpp>
#include <leap/sandbox/task.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "compile/elf_kernels.hpp"
#include "sum_task.hpp"
#include "test_support.hpp"

namespace sb = leap::sandbox;
using leap_test::no_gpu_config;
using nlohmann::json;

namespace {

using leap_test::sum_task;

// The same two kernels, real CUDA, for NVRTC.
constexpr const char* k_two_pass_source = R"(
// leap-scratch: partials float32 ceil_div(n, 256)
// leap-launch: partial_sums grid=ceil_div(n, 256) block=256 shared=256 * 4 args=(x, partials, n)
// leap-launch: final_sum grid=1 block=1024 args=(partials, out, n)
extern "C" __global__ void partial_sums(const float* x, float* partials, int n) {
  extern __shared__ float s[];
  const int i = blockIdx.x * 256 + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int k = 128; k > 0; k /= 2) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = s[0];
}
extern "C" __global__ void final_sum(const float* partials, float* out, int n) {
  __shared__ float s[1024];
  const int count = (n + 255) / 256;
  float v = 0.0f;
  for (int i = threadIdx.x; i < count; i += 1024) v += partials[i];
  s[threadIdx.x] = v;
  __syncthreads();
  for (int k = 512; k > 0; k /= 2) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = s[0];
}
)";

}  // namespace

TEST_CASE("launch plans: built-in tasks say whether and how a plan may be declared", "[sandbox][plan][task]") {
  int allowing = 0, fixed = 0;
  for (const sb::BuiltinTask& t : sb::builtin_tasks()) {
    INFO(t.spec.name);
    if (t.spec.candidate_launch.allowed) {
      ++allowing;
      CHECK_THAT(t.spec.description,
                 Catch::Contains("// leap-launch: KERNEL grid=(...) block=(...)") &&
                     Catch::Contains("up to " + std::to_string(t.spec.candidate_launch.max_kernels) + " kernels") &&
                     Catch::Contains(std::to_string(t.spec.candidate_launch.max_shared_bytes / 1024) + " KiB") &&
                     Catch::Contains("// leap-scratch: NAME DTYPE COUNT"));
    } else {
      ++fixed;
      CHECK_THAT(t.spec.description,
                 Catch::Contains("The launch is fixed: leap-launch and leap-scratch lines are refused."));
    }
  }
  CHECK(allowing >= 1);
  CHECK(fixed >= 1);
}

TEST_CASE("launch plans: eval without a GPU checks the plan against the compiled module and reports it before no_gpu",
          "[sandbox][plan][evaluator]") {
  sb::Evaluator ev(no_gpu_config());
  const sb::TaskSpec task = sum_task();

  const sb::EvalResult r = ev.evaluate(task, k_two_pass_source);
  INFO(sb::to_json(r));
  REQUIRE(r.status == sb::EvalStatus::no_gpu);
  REQUIRE(r.launch_plan);
  CHECK(r.launch_plan->source == sb::PlanSource::candidate);
  CHECK(r.launch_plan->status == sb::PlanStatus::ok);
  CHECK_THAT(r.feedback,
             Catch::StartsWith("The kernel compiles and its launch plan is valid (partial_sums grid=(16) block=(256) "
                               "shared=1024; final_sum grid=(1) block=(1024); scratch partials: 16 x float32)"));
  const json j = json::parse(sb::to_json(r));
  const json& plan = j.at("launch_plan");
  CHECK(plan.at("source") == "candidate");
  CHECK(plan.at("status") == "ok");
  CHECK(plan.at("sizes") == json{{"n", 4096}});
  REQUIRE(plan.at("kernels").size() == 2);
  CHECK(plan.at("kernels")[0] == json{{"kernel", "partial_sums"},
                                      {"grid", {16, 1, 1}},
                                      {"block", {256, 1, 1}},
                                      {"shared_bytes", 1024},
                                      {"args", {"x", "partials", "n"}}});
  CHECK(plan.at("kernels")[1].at("block") == json{1024, 1, 1});
  CHECK(plan.at("scratch") ==
        json::array({json{{"name", "partials"}, {"dtype", "float32"}, {"count", 16}, {"bytes", 64}}}));
  CHECK_THAT(plan.at("directives").get<std::string>(),
             Catch::Contains("// leap-launch: final_sum grid=(1) block=(1024) args=(partials, out, n)"));

  // The second kernel missing from the module: a compile_error naming it, before no_gpu.
  std::string missing = k_two_pass_source;
  missing.replace(missing.find("void final_sum"), 14, "void final_sun");
  const sb::EvalResult m = ev.evaluate(task, missing);
  REQUIRE(m.verdict);
  CHECK(*m.verdict == leap::Verdict::compile_error);
  CHECK(m.launch_plan->status == sb::PlanStatus::invalid);
  CHECK_THAT(m.feedback,
             Catch::StartsWith("Launch plan error: line 4, kernel 'final_sum': no such kernel in the module (it has: "
                               "final_sun, partial_sums)"));

  // Over a limit: its own status, a compile_error verdict, and the JSON says why.
  std::string wide = k_two_pass_source;
  wide.replace(wide.find("block=1024"), 10, "block=2048");
  const sb::EvalResult w = ev.evaluate(task, wide);
  REQUIRE(w.verdict);
  CHECK(*w.verdict == leap::Verdict::compile_error);
  const json wj = json::parse(sb::to_json(w));
  CHECK(wj.at("launch_plan").at("status") == "invalid");
  CHECK_THAT(wj.at("launch_plan").at("error").get<std::string>(),
             Catch::Contains("block x \"2048\" is 2048, over the limit of 1024"));
  CHECK(wj.at("launch_plan").at("kernels").empty());

  // No plan: the task's launch, reported as such.
  const sb::EvalResult plain = ev.evaluate(task, task.reference_source);
  REQUIRE(plain.status == sb::EvalStatus::no_gpu);
  CHECK(plain.launch_plan->source == sb::PlanSource::task);
  CHECK(json::parse(sb::to_json(plain)).at("launch_plan").at("kernels")[0].at("kernel") == "sum");

  // A task that fixes its launch: refused.
  const sb::EvalResult refused = ev.evaluate(sum_task(""), k_two_pass_source);
  REQUIRE(refused.verdict);
  CHECK(*refused.verdict == leap::Verdict::compile_error);
  CHECK(refused.launch_plan->status == sb::PlanStatus::refused);
  CHECK_THAT(refused.feedback, Catch::StartsWith("Launch plan refused: task 'sum' fixes its launch"));

  // A compile error comes first: no plan is looked at.
  const sb::EvalResult broken = ev.evaluate(task, std::string(k_two_pass_source) + "this does not compile\n");
  CHECK_FALSE(broken.launch_plan.has_value());
  CHECK(json::parse(sb::to_json(broken)).at("launch_plan").is_null());
}

TEST_CASE("launch plans: a built-in task's two-kernel variant compiles and its plan is valid",
          "[sandbox][plan][task]") {
  const sb::BuiltinTask* t = sb::find_builtin_task("row_sum");
  REQUIRE(t != nullptr);
  const sb::TaskVariant* v = t->variant("two_pass");
  REQUIRE(v != nullptr);
  sb::Evaluator ev(no_gpu_config());
  const sb::EvalResult r = ev.evaluate(t->spec, v->source);
  INFO(sb::to_json(r));
  REQUIRE(r.status == sb::EvalStatus::no_gpu);
  CHECK(r.launch_plan->resolved->kernels.size() == 2);
  // Resolved at the task's timing sizes: a block row per matrix row, a partial per 1024 columns.
  const auto rows = t->spec.sizes.at("rows"), cols = t->spec.sizes.at("cols");
  CHECK(r.launch_plan->resolved->kernels[0].shape.grid[1] == rows);
  CHECK(r.launch_plan->resolved->scratch[0].count == rows * ((cols + 1023) / 1024));
}

TEST_CASE("launch plans: serve's eval reports the plan, and takes headers like compile", "[sandbox][plan][serve]") {
  sb::Evaluator evaluator(no_gpu_config());
  const sb::RequestHandler handler(evaluator);
  json request = {{"id", 1},
                  {"op", "eval"},
                  {"task", json::parse(sb::task_to_json(sum_task()))},
                  {"source", "#include \"sums.cuh\"\n"},
                  {"headers", {{"sums.cuh", k_two_pass_source}}}};
  const json response = json::parse(handler.handle(request.dump()));
  INFO(response.dump());
  REQUIRE(response.at("ok") == true);
  const json& result = response.at("result");
  // The header compiled with the source; directives are read from the candidate's own source only,
  // so this one is held to the task's launch, and its module has no kernel 'sum'.
  CHECK(result.at("compile").at("kernels") == json::array({"final_sum", "partial_sums"}));
  CHECK(result.at("launch_plan").at("source") == "task");
  CHECK(result.at("verdict") == "compile_error");
  CHECK_THAT(result.at("detail").get<std::string>(), Catch::Contains("defines no kernel named 'sum'"));

  request["source"] = std::string(k_two_pass_source).substr(0, std::string(k_two_pass_source).find("extern")) +
                      "#include \"sums.cuh\"\n";
  const json with_plan = json::parse(handler.handle(request.dump()));
  INFO(with_plan.dump());
  REQUIRE(with_plan.at("ok") == true);
  CHECK(with_plan.at("result").at("status") == "no_gpu");
  CHECK(with_plan.at("result").at("launch_plan").at("kernels").size() == 2);

  request["headers"] = json::array({"not an object"});
  const json bad = json::parse(handler.handle(request.dump()));
  CHECK(bad.at("ok") == false);
  CHECK(bad.at("error") == "eval: \"headers\" must be an object {\"name.cuh\": \"header text\"}");
}

TEST_CASE(
    "launch plans: arguments that do not match the kernel's parameters in the CUBIN are an invalid plan before "
    "anything runs",
    "[sandbox][plan][evaluator]") {
  sb::Evaluator ev(no_gpu_config());
  const sb::TaskSpec task = sum_task();
  auto evaluate = [&](const std::string& from, const std::string& to) {
    std::string source = k_two_pass_source;
    REQUIRE(source.find(from) != std::string::npos);
    source.replace(source.find(from), from.size(), to);
    return ev.evaluate(task, source);
  };
  struct Case {
    const char* from;
    const char* to;
    const char* error;
  };
  const Case cases[] = {
      // final_sum loses a parameter the plan passes.
      {"final_sum(const float* partials, float* out, int n) {",
       "final_sum(const float* partials, float* out) { const int n = 4096;",
       "line 4, kernel 'final_sum': the kernel declares 2 parameters; the plan passes 3 (partials, out, n): remove the "
       "extra argument"},
      // final_sum gains one the plan does not pass (the plan would leave it to whatever lies past the array).
      {"final_sum(const float* partials, float* out, int n)",
       "final_sum(const float* partials, float* out, int n, const float* more)",
       "line 4, kernel 'final_sum': the kernel declares 4 parameters; the plan passes 3 (partials, out, n): add the "
       "missing argument"},
      // The plan passes 2 arguments to a kernel of 3.
      {"args=(partials, out, n)", "args=(partials, out)",
       "line 4, kernel 'final_sum': the kernel declares 3 parameters; the plan passes 2 (partials, out)"},
      // A double where the plan passes an int32.
      {"final_sum(const float* partials, float* out, int n)", "final_sum(const float* partials, float* out, double n)",
       "line 4, kernel 'final_sum': parameter 3 of 3 is 8 bytes; the plan passes 'n' (an int32 scalar, 4 bytes): "
       "declare it `int`"},
      // A double where the plan passes a pointer: same size, and a double is not a pointer, but the
      // CUBIN knows only bytes; an int where it passes a pointer is caught.
      {"partial_sums(const float* x, float* partials, int n) {",
       "partial_sums(const float* x, int partials_at, int n) { float* partials = static_cast<float*>(nullptr) + "
       "partials_at;",
       "line 3, kernel 'partial_sums': parameter 2 of 3 is 4 bytes; the plan passes 'partials' (float32 scratch, "
       "passed as an 8-byte "
       "pointer): declare it `float*`"},
      // A struct of 24 bytes where the plan passes an int32.
      {"extern \"C\" __global__ void final_sum(const float* partials, float* out, int n) {",
       "struct Wide { long a, b, c; };\nextern \"C\" __global__ void final_sum(const float* partials, float* out, Wide "
       "w) { int n = (int)w.a;",
       "line 4, kernel 'final_sum': parameter 3 of 3 is 24 bytes; the plan passes 'n' (an int32 scalar, 4 bytes)"},
      // All three in one struct: one parameter where the plan passes three.
      {"extern \"C\" __global__ void final_sum(const float* partials, float* out, int n) {",
       "struct Three { const float* a; float* b; long c; };\nextern \"C\" __global__ void final_sum(Three t) { const "
       "float* partials = t.a; "
       "float* out = t.b; int n = (int)t.c;",
       "line 4, kernel 'final_sum': the kernel declares 1 parameter; the plan passes 3"},
  };
  for (const Case& c : cases) {
    INFO(c.to);
    sb::EvalResult r = evaluate(c.from, c.to);
    INFO(sb::to_json(r));
    REQUIRE(r.verdict);
    CHECK(*r.verdict == leap::Verdict::compile_error);
    REQUIRE(r.launch_plan);
    CHECK(r.launch_plan->status == sb::PlanStatus::invalid);
    CHECK_THAT(r.launch_plan->error, Catch::StartsWith(c.error));
    CHECK_THAT(r.feedback, Catch::StartsWith("Launch plan error: "));
  }
}

TEST_CASE("launch plans: the task's own launch is held to the kernel's parameters too", "[sandbox][plan][evaluator]") {
  sb::Evaluator ev(no_gpu_config());
  const sb::TaskSpec task = sum_task();
  const sb::EvalResult ok = ev.evaluate(task, task.reference_source);
  REQUIRE(ok.status == sb::EvalStatus::no_gpu);

  const sb::EvalResult missing =
      ev.evaluate(task, "extern \"C\" __global__ void sum(const float* x, float* out) { out[0] = x[0]; }");
  INFO(sb::to_json(missing));
  REQUIRE(missing.verdict);
  CHECK(*missing.verdict == leap::Verdict::compile_error);
  CHECK(missing.launch_plan->source == sb::PlanSource::task);
  CHECK(missing.launch_plan->status == sb::PlanStatus::invalid);
  CHECK(missing.launch_plan->error ==
        "the task's launch, kernel 'sum': the kernel declares 2 parameters; the task passes 3 (x, out, n): declare the "
        "kernel with the "
        "task's signature: (const float* x, float* out, int n)");

  const sb::EvalResult wide =
      ev.evaluate(task, "extern \"C\" __global__ void sum(const float* x, float* out, long n) { out[0] = x[n]; }");
  REQUIRE(wide.verdict);
  CHECK(*wide.verdict == leap::Verdict::compile_error);
  CHECK_THAT(
      wide.detail,
      Catch::Contains("parameter 3 of 3 is 8 bytes; the task passes 'n' (an int32 scalar, 4 bytes): declare it `int`"));

  // A reference that does not take the task's parameters: the task's error, not the candidate's.
  sb::TaskSpec bad_ref = task;
  bad_ref.name = "sum_bad_reference";
  bad_ref.reference_source = "extern \"C\" __global__ void sum(const float* x, float* out, double n) {}";
  const sb::EvalResult r = ev.evaluate(bad_ref, task.reference_source);
  CHECK(r.status == sb::EvalStatus::error);
  CHECK_FALSE(r.verdict.has_value());
  CHECK_THAT(r.error, Catch::Contains("the task's reference kernel does not take the task's parameters") &&
                          Catch::Contains("parameter 3 of 3 is 8 bytes"));
}

TEST_CASE("launch plans: every built-in task's kernels take exactly the arguments their launches pass",
          "[sandbox][plan][task]") {
  std::vector<sb::CompileJob> jobs;
  std::vector<const sb::BuiltinTask*> tasks;
  std::vector<const sb::TaskVariant*> variants;
  for (const sb::BuiltinTask& t : sb::builtin_tasks()) {
    for (const sb::TaskVariant& v : t.variants) {
      if (v.expect == "compile_error") continue;
      sb::CompileJob j;
      j.source = v.source;
      j.options.arch = "sm_90";
      j.options.want_cubin = true;
      jobs.push_back(std::move(j));
      tasks.push_back(&t);
      variants.push_back(&v);
    }
  }
  sb::Compiler compiler(leap_test::config(sb::Isolation::trusted_in_process, 2));
  const std::vector<sb::CompileResult> results = compiler.compile_batch(jobs);
  std::size_t checked = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const sb::TaskSpec& spec = tasks[i]->spec;
    INFO(spec.name << "/" << variants[i]->name << "\n" << results[i].log);
    REQUIRE(results[i].ok());
    const std::optional<sb::KernelParams> params = sb::detail::cubin_kernel_params(results[i].cubin);
    REQUIRE(params.has_value());
    const sb::PlanParse parsed = sb::parse_launch_plan(variants[i]->source);
    REQUIRE(parsed.ok());
    const sb::PlanContext context{&*results[i].kernels, 0, &*params};
    if (parsed.plan.empty()) {
      CHECK_NOTHROW(
          sb::resolve_launch_plan(sb::task_launch_plan(spec), spec, spec.sizes, sb::k_task_launch_bounds, context));
    } else {
      const sb::PlanCheck c = sb::check_candidate_plan(parsed.plan, spec, context);
      CHECK(c.error == "");
    }
    ++checked;
  }
  CHECK(checked >= 8 * 3);
}

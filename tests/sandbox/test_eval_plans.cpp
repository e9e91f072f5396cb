// SPDX-License-Identifier: Apache-2.0
// Launch plans through eval without a GPU: a real two-kernel module compiled by NVRTC has its plan
// checked against the module's symbol table and the task's policy and reported before the no_gpu
// status; an invalid or refused plan is a compile_error with its own plan status; serve's eval
// reports the same and takes headers; the built-in tasks say whether and how a plan may be declared.
#include <catch2/catch.hpp>
#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/launch_plan.hpp>
#include <leap/sandbox/request_handler.hpp>
#include <leap/sandbox/task.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "sum_task.hpp"
#include "test_support.hpp"

namespace sb = leap::sandbox;
using nlohmann::json;
using leap_test::no_gpu_config;

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
      CHECK_THAT(t.spec.description, Catch::Contains("// leap-launch: KERNEL grid=(...) block=(...)") &&
                                         Catch::Contains("up to " + std::to_string(t.spec.candidate_launch.max_kernels) + " kernels") &&
                                         Catch::Contains(std::to_string(t.spec.candidate_launch.max_shared_bytes / 1024) + " KiB") &&
                                         Catch::Contains("// leap-scratch: NAME DTYPE COUNT"));
    } else {
      ++fixed;
      CHECK_THAT(t.spec.description, Catch::Contains("The launch is fixed: leap-launch and leap-scratch lines are refused."));
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
  CHECK(r.launch_plan->source == "candidate");
  CHECK(r.launch_plan->status == sb::PlanStatus::ok);
  CHECK_THAT(r.feedback, Catch::StartsWith("The kernel compiles and its launch plan is valid (partial_sums grid=(16) block=(256) "
                                           "shared=1024; final_sum grid=(1) block=(1024); scratch partials: 16 x float32)"));
  const json j = json::parse(sb::to_json(r));
  const json& plan = j.at("launch_plan");
  CHECK(plan.at("source") == "candidate");
  CHECK(plan.at("status") == "ok");
  CHECK(plan.at("sizes") == json{{"n", 4096}});
  REQUIRE(plan.at("kernels").size() == 2);
  CHECK(plan.at("kernels")[0] == json{{"kernel", "partial_sums"}, {"grid", {16, 1, 1}}, {"block", {256, 1, 1}}, {"shared_bytes", 1024},
                                      {"args", {"x", "partials", "n"}}});
  CHECK(plan.at("kernels")[1].at("block") == json{1024, 1, 1});
  CHECK(plan.at("scratch") == json::array({json{{"name", "partials"}, {"dtype", "float32"}, {"count", 16}, {"bytes", 64}}}));
  CHECK_THAT(plan.at("directives").get<std::string>(), Catch::Contains("// leap-launch: final_sum grid=(1) block=(1024) args=(partials, out, n)"));

  // The second kernel missing from the module: a compile_error naming it, before no_gpu.
  std::string missing = k_two_pass_source;
  missing.replace(missing.find("void final_sum"), 14, "void final_sun");
  const sb::EvalResult m = ev.evaluate(task, missing);
  REQUIRE(m.verdict);
  CHECK(*m.verdict == leap::Verdict::compile_error);
  CHECK(m.launch_plan->status == sb::PlanStatus::invalid);
  CHECK_THAT(m.feedback, Catch::StartsWith("Launch plan error: line 4, kernel 'final_sum': no such kernel in the module (it has: "
                                           "final_sun, partial_sums)"));

  // Over a limit: its own status, a compile_error verdict, and the JSON says why.
  std::string wide = k_two_pass_source;
  wide.replace(wide.find("block=1024"), 10, "block=2048");
  const sb::EvalResult w = ev.evaluate(task, wide);
  REQUIRE(w.verdict);
  CHECK(*w.verdict == leap::Verdict::compile_error);
  const json wj = json::parse(sb::to_json(w));
  CHECK(wj.at("launch_plan").at("status") == "invalid");
  CHECK_THAT(wj.at("launch_plan").at("error").get<std::string>(), Catch::Contains("block x \"2048\" is 2048, over the limit of 1024"));
  CHECK(wj.at("launch_plan").at("kernels").empty());

  // No plan: the task's launch, reported as such.
  const sb::EvalResult plain = ev.evaluate(task, task.reference_source);
  REQUIRE(plain.status == sb::EvalStatus::no_gpu);
  CHECK(plain.launch_plan->source == "task");
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

TEST_CASE("launch plans: a built-in task's two-kernel variant compiles and its plan is valid", "[sandbox][plan][task]") {
  const sb::BuiltinTask* t = sb::find_builtin_task("row_sum");
  REQUIRE(t != nullptr);
  const sb::TaskVariant* v = t->variant("two_pass");
  REQUIRE(v != nullptr);
  sb::Evaluator ev(no_gpu_config());
  const sb::EvalResult r = ev.evaluate(t->spec, v->source);
  INFO(sb::to_json(r));
  REQUIRE(r.status == sb::EvalStatus::no_gpu);
  CHECK(r.launch_plan->resolved->kernels.size() == 2);
  CHECK(r.launch_plan->resolved->kernels[0].shape.grid[1] == 8192);
  CHECK(r.launch_plan->resolved->scratch[0].count == 8192 * 4);
}

TEST_CASE("launch plans: serve's eval reports the plan, and takes headers like compile", "[sandbox][plan][serve]") {
  sb::Evaluator evaluator(no_gpu_config());
  const sb::RequestHandler handler(evaluator);
  json request = {{"id", 1}, {"op", "eval"}, {"task", json::parse(sb::task_to_json(sum_task()))},
                  {"source", "#include \"sums.cuh\"\n"}, {"headers", {{"sums.cuh", k_two_pass_source}}}};
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

  request["source"] = std::string(k_two_pass_source).substr(0, std::string(k_two_pass_source).find("extern")) + "#include \"sums.cuh\"\n";
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

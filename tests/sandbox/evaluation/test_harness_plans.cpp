// SPDX-License-Identifier: Apache-2.0
// Launch plans in the evaluation protocol, against the CPU fake of the driver: a two-kernel
// reduction with scratch is run, checked and timed as one sequence; a plan that is missing a kernel,
// breaks a limit, passes arguments its kernels do not take or is declared for a task that fixes its
// launch never reaches a launch; scratch is poisoned before every run, so no run finds what an
// earlier one left there.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/launch_plan.hpp>
#include <leap/sandbox/task.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fake_gpu_driver.hpp"
#include "harness_runner.hpp"

namespace sb = leap::sandbox;
using nlohmann::json;
using sb::test::FakeCall;
using sb::test::FakeGpu;
using sb::test::FakeKernel;

// These tests hold the protocol to exact figures (speedups, run counts, step orders), so they run
// on the idealised fake; test_fake_rules.cpp holds the harness to the driver's real rules.
constexpr sb::test::FakeRules k_exact = sb::test::FakeRules::idealised();

namespace {

// sum(x, out, n): out[0] = the sum of x[0..n). Three size sets, two trials each.
sb::TaskSpec sum_task(bool plans_allowed = true) {
  std::string spec = R"json({
    "name": "sum", "description": "d", "entry": "sum",
    "params": [
      {"name": "x", "dtype": "float32", "role": "in", "shape": ["n"]},
      {"name": "out", "dtype": "float32", "role": "out", "shape": [1]},
      {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}],
    "sizes": {"n": 4096}, "check_sizes": [{"n": 5}, {"n": 1001}],
    "launch": {"grid": [1], "block": [256]},
    "candidate_launch": {"allowed": ALLOWED, "max_kernels": 3, "max_shared_bytes": 100000, "max_scratch_bytes": 65536},
    "reference": "extern \"C\" __global__ void sum(const float*, float*, int) {}",
    "tolerance": {"float32": {"atol": 1e-3, "rtol": 1e-4}},
    "trials": 2,
    "timing": {"warmup": 3, "min_reps": 10, "max_reps": 40, "target_spread": 0.02, "budget_ms": 1500},
    "time_limit_ms": 20000})json";
  spec.replace(spec.find("ALLOWED"), 7, plans_allowed ? "true" : "false");
  return sb::parse_task(spec);
}

constexpr const char* k_two_pass = R"(
// leap-scratch: partials float32 ceil_div(n, 256) + 1
// leap-launch: partial_sums grid=ceil_div(n, 256) block=256 shared=256 * 4 args=(x, partials, n)
// leap-launch: final_sum grid=1 block=(32) args=(partials, out, n)
)";

constexpr float k_tag = 12345.0f;  // what final_sum leaves in the last scratch element

void reference(FakeCall& c) {
  const int n = c.i32(2);
  const float* x = c.floats(c.pointer(0), static_cast<std::size_t>(n));
  float* out = c.floats(c.pointer(1), 1);
  if (x == nullptr || out == nullptr) return;
  double s = 0;
  for (int i = 0; i < n; ++i) s += x[i];
  out[0] = static_cast<float>(s);
  c.duration_ms = 2.0;
}

// What partial_sums saw in the scratch when it started, over all its runs.
struct ScratchSeen {
  int runs = 0;
  int found_poison = 0;  // the first partial was NaN (the poison), not an earlier run's sum
  int reused = 0;        // skipped its work because an earlier run's tag was still there
};

// One partial sum per block of 256 elements, as many blocks as the launch's grid says. When
// `trust_scratch`, it skips the work if the scratch still carries final_sum's tag from an earlier run.
FakeKernel partial_sums(ScratchSeen* seen = nullptr, bool trust_scratch = false, bool write_past_end = false) {
  return [=](FakeCall& c) {
    const int n = c.i32(2);
    const unsigned blocks = c.shape.grid[0];
    const float* x = c.floats(c.pointer(0), static_cast<std::size_t>(n));
    float* partials = c.floats(c.pointer(1), blocks + 1 + (write_past_end ? 1 : 0));
    if (x == nullptr || partials == nullptr) return;
    c.duration_ms = 0.3;
    if (seen != nullptr) {
      ++seen->runs;
      seen->found_poison += std::isnan(partials[0]) && std::isnan(partials[blocks]) ? 1 : 0;
    }
    if (trust_scratch && partials[blocks] == k_tag) {
      if (seen != nullptr) ++seen->reused;
      c.duration_ms = 0.01;
      return;
    }
    for (unsigned b = 0; b < blocks; ++b) {
      double s = 0;
      for (int i = static_cast<int>(b) * 256; i < n && i < static_cast<int>(b + 1) * 256; ++i) s += x[i];
      partials[b] = static_cast<float>(s);
    }
    if (write_past_end) partials[blocks + 1] = 1.0f;
  };
}

void final_sum(FakeCall& c) {
  const int n = c.i32(2);
  const std::size_t blocks = static_cast<std::size_t>((n + 255) / 256);
  float* partials = c.floats(c.pointer(0), blocks + 1);
  float* out = c.floats(c.pointer(1), 1);
  if (partials == nullptr || out == nullptr) return;
  double s = 0;
  for (std::size_t b = 0; b < blocks; ++b) s += partials[b];
  out[0] = static_cast<float>(s);
  partials[blocks] = k_tag;
  c.duration_ms = 0.2;
}

using Outcome = sb::test::HarnessOutcome;
using sb::test::verdict_of;

// What partial_sums and final_sum declare: (const float*, float*, int).
const std::vector<sb::KernelParam> k_pointer_pointer_int{{0, 8}, {8, 8}, {16, 4}};
sb::KernelParams two_kernel_params() {
  return {{"partial_sums", k_pointer_pointer_int}, {"final_sum", k_pointer_pointer_int}};
}

Outcome evaluate(FakeGpu& gpu, std::map<std::string, FakeKernel> candidate, const std::string& plan,
                 sb::TaskSpec task = sum_task(), bool time = true, sb::KernelParams params = two_kernel_params()) {
  gpu.add_module("fake:candidate", std::move(candidate), std::move(params));
  gpu.add_module("fake:reference", {{"sum", reference}});
  return sb::test::run_harness(gpu, task, 7, time, plan);
}

std::size_t count_ops(const FakeGpu& gpu, const std::string& what, const std::string& name = {}) {
  std::size_t n = 0;
  for (const auto& op : gpu.log) n += op.what == what && (name.empty() || op.name == name) ? 1 : 0;
  return n;
}

std::map<std::string, FakeKernel> two_kernels(FakeKernel first = partial_sums()) {
  return {{"partial_sums", std::move(first)}, {"final_sum", final_sum}};
}

}  // namespace

TEST_CASE("launch plans (fake GPU): a two-kernel reduction with scratch is correct, timed as one sequence",
          "[sandbox][harness][plan]") {
  FakeGpu gpu{k_exact};
  const Outcome o = evaluate(gpu, two_kernels(), k_two_pass);
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "correct");
  // Both kernels inside every timed window: 0.3 + 0.2 ms against the reference's 2 ms.
  CHECK(o.result.candidate.median_ms == Approx(0.5).epsilon(1e-3));
  CHECK(o.result.candidate.events_median_ms == Approx(0.5).epsilon(1e-3));
  CHECK(o.result.speedup == Approx(4.0).epsilon(1e-3));
  CHECK(o.result.trials == 6);

  // The grid each launch got is the plan's, resolved at each size set: ceil_div(n, 256).
  std::vector<std::uint64_t> first_args;
  for (const auto& op : gpu.log) {
    if (op.what == "launch" && op.name == "fake:candidate:partial_sums") {
      first_args = op.args;
      break;
    }
  }
  REQUIRE(first_args.size() == 3);  // (x, partials, n), as args= said

  // Every timed window of the candidate holds exactly its two launches, in order, and nothing else:
  // inputs, output poison and scratch poison all come before record_start.
  int windows = 0;
  for (std::size_t i = 0; i < gpu.log.size(); ++i) {
    if (gpu.log[i].what != "record_start") continue;
    std::vector<std::string> inside;
    std::size_t k = i + 1;
    for (; k < gpu.log.size() && gpu.log[k].what != "record_stop"; ++k)
      inside.push_back(gpu.log[k].what + " " + gpu.log[k].name);
    if (inside.size() == 2 && inside[0] == "launch fake:candidate:partial_sums") {
      CHECK(inside[1] == "launch fake:candidate:final_sum");
      ++windows;
    }
  }
  CHECK(windows >= 10);  // min_reps timed runs (warm-up batches hold more launches)

  REQUIRE(gpu.live_allocations() == 0);
  CHECK(gpu.unscrubbed_frees == 0);
}

TEST_CASE("launch plans (fake GPU): a timed run whose CUPTI records lack a kernel of the plan is timed by events",
          "[sandbox][harness][plan]") {
  // final_sum's records never arrive: CUPTI's window of each candidate run would hold partial_sums
  // alone (0.3 ms), and the plan would be paid for a speedup of 6.7 where it earned 4.
  for (const bool ids : {true, false}) {
    FakeGpu gpu{k_exact};
    gpu.external_ids = ids;
    gpu.undelivered = "final_sum";
    const Outcome o = evaluate(gpu, two_kernels(), k_two_pass);
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(o.result.candidate.method == "events");
    CHECK(o.result.candidate.median_ms == Approx(0.5).epsilon(1e-3));
    CHECK(o.result.speedup == Approx(4.0).epsilon(1e-3));
    CHECK_THAT(o.result.timing_note, Catch::Contains("CUDA events used"));
  }
}

TEST_CASE("launch plans (fake GPU): scratch is poisoned before every run, so no run reuses an earlier one's",
          "[sandbox][harness][plan]") {
  // partial_sums trusts a tag that final_sum leaves in scratch and skips its work when it finds it:
  // with the scratch poisoned before every run it never finds it, and the answer is never stale.
  FakeGpu gpu{k_exact};
  ScratchSeen seen;
  const Outcome o = evaluate(gpu, two_kernels(partial_sums(&seen, true)), k_two_pass);
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "correct");
  // Every run, warm-up included, found the scratch poisoned; not one found the tag of the run before.
  CHECK(seen.runs > 6 + 10);  // the trials, the timed runs and the warm-up
  CHECK(seen.found_poison == seen.runs);
  CHECK(seen.reused == 0);
  // Every correctness trial and every timed run poisoned the scratch before partial_sums ran: count
  // the fills of the scratch buffer (its allocation is the one of ceil_div(n, 256) + 1 floats).
  std::size_t scratch_fills_before_launch = 0, launches = 0;
  bool filled = false;
  for (const auto& op : gpu.log) {
    if (op.what == "fill" && op.bytes == (4096 / 256 + 1) * 4) filled = true;
    if (op.what == "launch" && op.name == "fake:candidate:partial_sums") {
      ++launches;
      scratch_fills_before_launch += filled ? 1 : 0;
      filled = false;
    }
  }
  CHECK(launches > 10);
  CHECK(scratch_fills_before_launch == launches - 2 * 2);  // all but the trials of the two smaller size sets

  // And the poisoning is what keeps it honest: the same kernel with its scratch left as the last
  // run left it (no fill between two runs) skips its work and answers with the stale sums.
  FakeGpu unpoisoned{k_exact};
  ScratchSeen seen2;
  unpoisoned.add_module("m", two_kernels(partial_sums(&seen2, true)));
  leap::sandbox::detail::ModuleHandle m = nullptr;
  REQUIRE(unpoisoned.load_module("m", m) == 0);
  leap::sandbox::detail::FunctionHandle f1 = nullptr, f2 = nullptr;
  REQUIRE(unpoisoned.get_function(m, "partial_sums", f1) == 0);
  REQUIRE(unpoisoned.get_function(m, "final_sum", f2) == 0);
  leap::sandbox::detail::DevicePtr x = 0, out = 0, partials = 0;
  REQUIRE(unpoisoned.allocate(256 * 4, x) == 0);
  REQUIRE(unpoisoned.allocate(4, out) == 0);
  REQUIRE(unpoisoned.allocate(2 * 4, partials) == 0);
  std::uint64_t n = 256;
  void* a1[] = {&x, &partials, &n};
  void* a2[] = {&partials, &out, &n};
  leap::sandbox::detail::LaunchShape one;
  for (float value : {1.0f, 2.0f}) {
    for (int i = 0; i < 256; ++i) std::memcpy(unpoisoned.memory(x + 4 * static_cast<std::uint64_t>(i), 4), &value, 4);
    REQUIRE(unpoisoned.launch(f1, one, a1, 3) == 0);
    REQUIRE(unpoisoned.launch(f2, one, a2, 3) == 0);
  }
  float stale = 0;
  std::memcpy(&stale, unpoisoned.memory(out, 4), 4);
  CHECK(seen2.reused == 1);
  CHECK(stale == 256.0f);  // the first run's sum, where 512 was due
}

TEST_CASE("launch plans (fake GPU): a plan never launches when a kernel is missing or a limit is broken",
          "[sandbox][harness][plan]") {
  SECTION("the second kernel is not in the module: the lookup fails before any launch") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, {{"partial_sums", partial_sums()}}, k_two_pass);
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "runtime_error");
    CHECK_THAT(o.result.detail, Catch::Contains("final_sum"));
    CHECK(count_ops(gpu, "launch") == 0);
  }
  SECTION("more threads per block than a GPU has") {
    FakeGpu gpu{k_exact};
    const Outcome o =
        evaluate(gpu, two_kernels(),
                 "// leap-scratch: partials float32 ceil_div(n, 256) + 1\n"
                 "// leap-launch: partial_sums grid=ceil_div(n, 256) block=(64, 32) args=(x, partials, n)\n"
                 "// leap-launch: final_sum grid=1 block=32 args=(partials, out, n)\n");
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "compile_error");
    CHECK_THAT(o.result.feedback, Catch::StartsWith("Launch plan error: line 2, kernel 'partial_sums'") &&
                                      Catch::Contains("2048 threads per block, over the limit of 1024"));
    CHECK(count_ops(gpu, "launch") == 0);
    CHECK(count_ops(gpu, "load") == 0);
  }
  SECTION("a grid expression that overflows") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, two_kernels(),
                               "// leap-scratch: partials float32 ceil_div(n, 256) + 1\n"
                               "// leap-launch: partial_sums grid=n*n*n*n*n*n*n block=256 args=(x, partials, n)\n");
    REQUIRE(verdict_of(o.result) == "compile_error");
    CHECK_THAT(o.result.detail, Catch::Contains("grid x") && Catch::Contains("overflow"));
    CHECK(count_ops(gpu, "launch") == 0);
  }
  SECTION("dynamic shared memory within the task's bound but over this device's opt-in limit") {
    FakeGpu gpu{k_exact};
    gpu.shared_optin = 64 * 1024;
    const Outcome o =
        evaluate(gpu, two_kernels(),
                 "// leap-scratch: partials float32 ceil_div(n, 256) + 1\n"
                 "// leap-launch: partial_sums grid=ceil_div(n, 256) block=256 shared=96*1024 args=(x, partials, n)\n"
                 "// leap-launch: final_sum grid=1 block=32 args=(partials, out, n)\n");
    REQUIRE(verdict_of(o.result) == "compile_error");
    CHECK_THAT(o.result.detail, Catch::Contains("98304") && Catch::Contains("the device's limit of 65536 bytes"));
    CHECK(count_ops(gpu, "launch") == 0);
  }
  SECTION("a task that fixes its launch refuses the plan") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, two_kernels(), k_two_pass, sum_task(false));
    REQUIRE(verdict_of(o.result) == "compile_error");
    CHECK_THAT(o.result.detail, Catch::Contains("task 'sum' fixes its launch (leap-launch: sum grid=(1) block=(256))"));
    CHECK(count_ops(gpu, "launch") == 0);
  }
  SECTION("a malformed plan in the request") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, two_kernels(), "// leap-launch: partial_sums grid=(1 block=1\n");
    REQUIRE(verdict_of(o.result) == "compile_error");
    CHECK_THAT(o.result.detail, Catch::Contains("line 1") && Catch::Contains("without its ')'"));
    CHECK(count_ops(gpu, "launch") == 0);
  }
}

TEST_CASE("launch plans (fake GPU): more than 48 KiB of shared memory is opted in through the driver first",
          "[sandbox][harness][plan]") {
  FakeGpu gpu{k_exact};
  const Outcome o =
      evaluate(gpu, two_kernels(),
               "// leap-scratch: partials float32 ceil_div(n, 256) + 1\n"
               "// leap-launch: partial_sums grid=ceil_div(n, 256) block=256 shared=64*1024 args=(x, partials, n)\n"
               "// leap-launch: final_sum grid=1 block=32 args=(partials, out, n)\n",
               sum_task(), false);
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "correct");
  bool allowed = false;
  for (const auto& op : gpu.log) {
    if (op.what == "allow_shared" && op.name == "fake:candidate:partial_sums" && op.bytes == 64 * 1024) allowed = true;
    if (op.what == "launch" && op.name == "fake:candidate:partial_sums") {
      CHECK(allowed);  // the attribute is set before the first launch
      break;
    }
  }
  CHECK(count_ops(gpu, "allow_shared", "fake:candidate:final_sum") == 0);  // no shared memory, nothing to allow
}

TEST_CASE("launch plans (fake GPU): a kernel's static shared memory counts with the plan's dynamic",
          "[sandbox][harness][plan]") {
  const std::string plan =
      "// leap-scratch: partials float32 ceil_div(n, 256) + 1\n"
      "// leap-launch: partial_sums grid=ceil_div(n, 256) block=256 shared=16*1024 args=(x, partials, n)\n"
      "// leap-launch: final_sum grid=1 block=32 args=(partials, out, n)\n";
  SECTION("40 KiB static and 16 KiB dynamic: over 48 KiB together, so the kernel is opted in") {
    FakeGpu gpu{k_exact};
    gpu.static_shared["partial_sums"] = 40 * 1024;
    const Outcome o = evaluate(gpu, two_kernels(), plan, sum_task(), false);
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "correct");
    CHECK(count_ops(gpu, "allow_shared", "fake:candidate:partial_sums") > 0);
  }
  SECTION("200 KiB static and 40 KiB dynamic: over the device's 227 KiB, refused before any launch") {
    FakeGpu gpu{k_exact};
    gpu.static_shared["partial_sums"] = 200 * 1024;
    std::string big = plan;
    big.replace(big.find("shared=16*1024"), 14, "shared=40*1024");
    const Outcome o = evaluate(gpu, two_kernels(), big, sum_task(), false);
    REQUIRE(verdict_of(o.result) == "compile_error");
    CHECK_THAT(o.result.feedback,
               Catch::StartsWith("Launch plan error: line 2, kernel 'partial_sums': 204800 bytes of static shared "
                                 "memory and 40960 of dynamic (shared=40*1024) are over the device's limit of 232448 "
                                 "bytes per block"));
    CHECK(count_ops(gpu, "launch") == 0);
  }
}

TEST_CASE("launch plans (fake GPU): writing past a scratch buffer is caught by its guard", "[sandbox][harness][plan]") {
  FakeGpu gpu{k_exact};
  const Outcome o = evaluate(gpu, two_kernels(partial_sums(nullptr, false, true)), k_two_pass);
  REQUIRE(verdict_of(o.result) == "wrong_answer");
  CHECK_THAT(o.result.detail,
             Catch::Contains("wrote outside scratch buffer 'partials' (0 bytes before its start, 4 after its end)"));
}

TEST_CASE("launch plans (fake GPU): the existing defences hold for every kernel of a plan",
          "[sandbox][harness][plan]") {
  SECTION("the second kernel counts its calls and stops working after the checked ones: caught when timed") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu,
                               {{"partial_sums", partial_sums()},
                                {"final_sum",
                                 [](FakeCall& c) {
                                   if (++c.globals["calls"] > 6) {
                                     c.duration_ms = 0.01;
                                     return;
                                   }
                                   final_sum(c);
                                 }}},
                               k_two_pass);
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "wrong_answer");
    CHECK(o.reply.at("when_timed") == true);
    CHECK_THAT(o.result.detail, Catch::Contains("different result when timed"));
  }
  SECTION("the first kernel writes its input: caught after the trial") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, two_kernels([](FakeCall& c) {
                                 partial_sums()(c);
                                 if (float* x = c.floats(c.pointer(0), 1)) x[0] = 0.0f;
                               }),
                               k_two_pass);
    REQUIRE(verdict_of(o.result) == "wrong_answer");
    CHECK_THAT(o.result.detail, Catch::Contains("modified its input 'x'"));
  }
  SECTION("the module is reloaded before timing, and every kernel of the plan looked up again") {
    FakeGpu gpu{k_exact};
    const Outcome o = evaluate(gpu, two_kernels(), k_two_pass);
    REQUIRE(verdict_of(o.result) == "correct");
    std::size_t reload_at = 0;
    for (std::size_t i = 0; i < gpu.log.size(); ++i) {
      if (gpu.log[i].what == "stage" && gpu.log[i].name == "reload") reload_at = i;
    }
    REQUIRE(reload_at > 0);
    CHECK(gpu.log.at(reload_at + 1).what == "unload");
    CHECK(gpu.log.at(reload_at + 2).what == "load");
    // Launches after the reload go through the new module's functions (an old handle would fail).
    bool launched_after = false;
    for (std::size_t i = reload_at; i < gpu.log.size(); ++i)
      launched_after = launched_after || gpu.log[i].name == "fake:candidate:final_sum";
    CHECK(launched_after);
  }
  SECTION("the first kernel faults: a runtime_error that says where in the plan it surfaced") {
    FakeGpu gpu{k_exact};
    const Outcome o =
        evaluate(gpu, two_kernels([](FakeCall& c) { c.status = sb::test::k_illegal_address; }), k_two_pass);
    REQUIRE(verdict_of(o.result) == "runtime_error");
    CHECK(o.result.cuda_error == "CUDA_ERROR_ILLEGAL_ADDRESS");
    CHECK_THAT(o.result.detail,
               Catch::Contains("(at the launch of kernel 2 of 2, 'final_sum', or in a kernel before it)"));
    CHECK(count_ops(gpu, "launch", "fake:candidate:final_sum") == 0);  // the fault stopped the sequence
  }
}

TEST_CASE("launch plans (fake GPU): arguments that do not match the kernel's parameters never reach a launch",
          "[sandbox][harness][plan]") {
  // The driver's account of each kernel (cuFuncGetParamInfo) decides; the plan is k_two_pass,
  // (x, partials, n) and (partials, out, n).
  struct Case {
    const char* name;
    std::vector<sb::KernelParam> final_sum;
    const char* expected;
  };
  const std::vector<sb::KernelParam> many = [] {
    std::vector<sb::KernelParam> p;
    for (std::uint32_t i = 0; i < 102; ++i) p.push_back({8 * i, 8});
    return p;
  }();
  const Case cases[] = {
      {"a kernel declaring 102 parameters, passed 3", many,
       "line 4, kernel 'final_sum': the kernel declares 102 parameters; the plan passes 3 (partials, out, n): add the "
       "missing argument"},
      {"one parameter fewer than the plan passes",
       {{0, 8}, {8, 8}},
       "line 4, kernel 'final_sum': the kernel declares 2 parameters; the plan passes 3 (partials, out, n): remove the "
       "extra argument"},
      {"a double where the plan passes a pointer",
       {{0, 8}, {8, 8}, {16, 8}},
       "line 4, kernel 'final_sum': parameter 3 of 3 is 8 bytes; the plan passes 'n' (an int32 scalar, 4 bytes): "
       "declare it `int`"},
      {"an int where the plan passes a pointer",
       {{0, 4}, {8, 8}, {16, 4}},
       "line 4, kernel 'final_sum': parameter 1 of 3 is 4 bytes; the plan passes 'partials' (float32 scratch, passed "
       "as an 8-byte "
       "pointer): declare it `float*`"},
      {"a 24-byte struct", {{0, 8}, {8, 8}, {16, 24}}, "parameter 3 of 3 is 24 bytes"},
      {"no parameters at all", {}, "the kernel declares 0 parameters; the plan passes 3"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      FakeGpu gpu{k_exact};
      sb::KernelParams params = two_kernel_params();
      params["final_sum"] = c.final_sum;
      const Outcome o = evaluate(gpu, two_kernels(), k_two_pass, sum_task(), true, params);
      INFO(o.reply.dump());
      REQUIRE(verdict_of(o.result) == "compile_error");
      CHECK_THAT(o.reply.at("plan_error").get<std::string>(),
                 Catch::StartsWith(c.expected) || Catch::Contains(c.expected));
      CHECK_THAT(o.result.feedback, Catch::StartsWith("Launch plan error: "));
      CHECK(count_ops(gpu, "launch") == 0);
      CHECK(count_ops(gpu, "alloc") == 0);  // refused before a single buffer
      CHECK(gpu.argument_overreads == 0);
      CHECK(gpu.live_allocations() == 0);
    }
  }
}

TEST_CASE("launch plans (fake GPU): the task's own launch is checked the same way, the candidate's and the reference's",
          "[sandbox][harness][plan]") {
  SECTION("a candidate kernel that takes a double for the task's int32 'n'") {
    FakeGpu gpu{k_exact};
    gpu.add_module("fake:candidate", {{"sum", reference}}, {{"sum", {{0, 8}, {8, 8}, {16, 8}}}});
    gpu.add_module("fake:reference", {{"sum", reference}});
    const Outcome o = sb::test::run_harness(gpu, sum_task(), 7, true);
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "compile_error");
    CHECK_THAT(
        o.reply.at("plan_error").get<std::string>(),
        Catch::StartsWith(
            "the task's launch, kernel 'sum': parameter 3 of 3 is 8 bytes; the task passes 'n' (an int32 scalar, "
            "4 bytes): declare it `int`"));
    CHECK(count_ops(gpu, "launch") == 0);
  }
  SECTION("a candidate kernel that leaves out 'n'") {
    FakeGpu gpu{k_exact};
    gpu.add_module("fake:candidate", {{"sum", reference}}, {{"sum", {{0, 8}, {8, 8}}}});
    gpu.add_module("fake:reference", {{"sum", reference}});
    const Outcome o = sb::test::run_harness(gpu, sum_task(), 7, true);
    REQUIRE(verdict_of(o.result) == "compile_error");
    CHECK_THAT(
        o.reply.at("plan_error").get<std::string>(),
        Catch::Contains(
            "the kernel declares 2 parameters; the task passes 3 (x, out, n): declare the kernel with the task's "
            "signature: (const float* x, float* out, int n)"));
    CHECK(count_ops(gpu, "launch") == 0);
  }
  SECTION("a reference that does not take the task's parameters is the task's fault, not the candidate's") {
    FakeGpu gpu{k_exact};
    gpu.add_module("fake:candidate", {{"sum", reference}});
    gpu.add_module("fake:reference", {{"sum", reference}}, {{"sum", {{0, 8}, {8, 8}}}});
    const Outcome o = sb::test::run_harness(gpu, sum_task(), 7, true);
    CHECK_FALSE(o.result.verdict.has_value());
    CHECK(o.result.status == sb::EvalStatus::error);
    CHECK_THAT(o.result.error,
               Catch::Contains("the task's launch of the reference") && Catch::Contains("declares 2 parameters"));
    CHECK(count_ops(gpu, "launch") == 0);
  }
  SECTION("a driver that cannot tell (before CUDA 12.4) and a module that is no CUBIN: refused, not guessed") {
    FakeGpu gpu{k_exact};
    gpu.add_module("fake:candidate", two_kernels(), {});  // no parameters registered: CUDA_ERROR_NOT_SUPPORTED
    gpu.add_module("fake:reference", {{"sum", reference}});
    const Outcome o = sb::test::run_harness(gpu, sum_task(), 7, true, k_two_pass);
    INFO(o.reply.dump());
    REQUIRE(verdict_of(o.result) == "compile_error");
    CHECK_THAT(o.reply.at("plan_error").get<std::string>(), Catch::Contains("kernel parameters could not be read"));
    CHECK(count_ops(gpu, "launch") == 0);
  }
}

TEST_CASE("launch plans (fake GPU): every launch passes exactly one pointer per declared parameter",
          "[sandbox][harness][plan]") {
  FakeGpu gpu{k_exact};
  const Outcome o = evaluate(gpu, two_kernels(), k_two_pass);
  REQUIRE(verdict_of(o.result) == "correct");
  std::size_t launches = 0;
  for (const auto& op : gpu.log) {
    if (op.what != "launch") continue;
    ++launches;
    CHECK(op.args.size() == 3);
  }
  CHECK(launches > 20);
  CHECK(gpu.argument_overreads == 0);  // the driver never read past what the harness passed
}

TEST_CASE("fake GPU: cuFuncGetParamInfo's rules, as the driver has them", "[sandbox][harness][plan]") {
  FakeGpu gpu{k_exact};
  gpu.add_module("m", two_kernels(), {{"partial_sums", k_pointer_pointer_int}});
  leap::sandbox::detail::ModuleHandle m = nullptr;
  REQUIRE(gpu.load_module("m", m) == 0);
  leap::sandbox::detail::FunctionHandle f = nullptr, g = nullptr;
  REQUIRE(gpu.get_function(m, "partial_sums", f) == 0);
  REQUIRE(gpu.get_function(m, "final_sum", g) == 0);
  std::size_t offset = 99, size = 99;
  CHECK(gpu.param_info(f, 2, offset, size) == 0);
  CHECK(offset == 16);
  CHECK(size == 4);
  CHECK(gpu.param_info(f, 3, offset, size) == 1);  // CUDA_ERROR_INVALID_VALUE past the last parameter
  CHECK(gpu.error_name(gpu.param_info(g, 0, offset, size)) == "CUDA_ERROR_NOT_SUPPORTED");  // registered without any
  // A launch with fewer pointers than the kernel declares reads past them on a GPU; the fake counts it.
  leap::sandbox::detail::DevicePtr x = 0;
  REQUIRE(gpu.allocate(1024, x) == 0);
  void* two[] = {&x, &x};
  leap::sandbox::detail::LaunchShape one;
  REQUIRE(gpu.launch(f, one, two, 2) == 0);
  CHECK(gpu.argument_overreads == 1);
}

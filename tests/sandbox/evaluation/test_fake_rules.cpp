// SPDX-License-Identifier: Apache-2.0
// The CPU fake follows the driver's rules (fake_rules.hpp), and for each rule the harness fault it
// would have hidden: a late fault blamed on the harness, a memset trusted on a poisoned context,
// a stopping rule that never stops under event jitter, a run paid for part of its plan from
// incomplete activity records, a flush in the wrong place, a deadline kept by the wall clock while
// the device's time runs out. The draw check (draw_check.hpp) against a device generator that
// disagrees with its host twin is here too.
#include <algorithm>
#include <chrono>
#include <catch2/catch.hpp>
#include <cmath>
#include <leap/sandbox/task.hpp>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "evaluation/draw_check.hpp"
#include "fake_gpu_driver.hpp"
#include "harness_runner.hpp"

namespace sb = leap::sandbox;
using nlohmann::json;
using sb::test::FakeCall;
using sb::test::FakeGpu;
using sb::test::FakeKernel;
using sb::test::FakeRules;
using sb::test::verdict_of;

namespace {

// ---- the tasks ------------------------------------------------------------------------------------

// scale_add(x, y, out, alpha, n): out[i] = alpha * x[i] + y[i], one size set, one trial.
sb::TaskSpec scale_add_task(int time_limit_ms = 20000, double target_spread = 0.02, int max_reps = 40) {
  return sb::parse_task(R"json({
    "name": "scale_add", "description": "d", "entry": "scale_add",
    "params": [
      {"name": "x", "dtype": "float32", "role": "in", "shape": ["n"]},
      {"name": "y", "dtype": "float32", "role": "in", "shape": ["n"]},
      {"name": "out", "dtype": "float32", "role": "out", "shape": ["n"]},
      {"name": "alpha", "kind": "scalar", "dtype": "float32", "value": 1.75},
      {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}],
    "sizes": {"n": 4096}, "check_sizes": [{"n": 1001}],
    "launch": {"grid": ["ceil_div(n, 256)"], "block": [256]},
    "reference": "extern \"C\" __global__ void scale_add(const float*, const float*, float*, float, int) {}",
    "trials": 2,
    "timing": {"warmup": 3, "min_reps": 10, "max_reps": )json" +
                        std::to_string(max_reps) + R"json(, "target_spread": )json" + std::to_string(target_spread) +
                        R"json(, "budget_ms": 100000},
    "time_limit_ms": )json" +
                        std::to_string(time_limit_ms) + "}");
}

bool scale_add(FakeCall& c) {
  const int n = c.i32(4);
  float* x = c.floats(c.pointer(0), static_cast<std::size_t>(n));
  float* y = c.floats(c.pointer(1), static_cast<std::size_t>(n));
  float* out = c.floats(c.pointer(2), static_cast<std::size_t>(n));
  if (x == nullptr || y == nullptr || out == nullptr) return false;
  for (int i = 0; i < n; ++i) out[i] = c.f32(3) * x[i] + y[i];
  return true;
}

FakeKernel scale_add_taking(double ms) {
  return [ms](FakeCall& c) {
    scale_add(c);
    c.duration_ms = ms;
  };
}

sb::test::HarnessOutcome evaluate_scale_add(FakeGpu& gpu, double candidate_ms, double reference_ms,
                                            const sb::TaskSpec& task = scale_add_task()) {
  gpu.add_module("fake:candidate", {{"scale_add", scale_add_taking(candidate_ms)}});
  gpu.add_module("fake:reference", {{"scale_add", scale_add_taking(reference_ms)}});
  return sb::test::run_harness(gpu, task, 42, true);
}

// sum(x, out, n) as two kernels with scratch (partial_sums, then final_sum), the reference one.
sb::TaskSpec sum_task() {
  return sb::parse_task(R"json({
    "name": "sum", "description": "d", "entry": "sum",
    "params": [
      {"name": "x", "dtype": "float32", "role": "in", "shape": ["n"]},
      {"name": "out", "dtype": "float32", "role": "out", "shape": [1]},
      {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}],
    "sizes": {"n": 4096}, "check_sizes": [{"n": 1001}],
    "launch": {"grid": [1], "block": [256]},
    "candidate_launch": {"allowed": true, "max_kernels": 3, "max_shared_bytes": 100000, "max_scratch_bytes": 65536},
    "reference": "extern \"C\" __global__ void sum(const float*, float*, int) {}",
    "tolerance": {"float32": {"atol": 1e-3, "rtol": 1e-4}},
    "trials": 2,
    "timing": {"warmup": 3, "min_reps": 10, "max_reps": 40, "target_spread": 0.5, "budget_ms": 100000},
    "time_limit_ms": 20000})json");
}

constexpr const char* k_two_pass = R"(
// leap-scratch: partials float32 ceil_div(n, 256) + 1
// leap-launch: partial_sums grid=ceil_div(n, 256) block=256 args=(x, partials, n)
// leap-launch: final_sum grid=1 block=(32) args=(partials, out, n)
)";

void sum_reference(FakeCall& c) {
  const int n = c.i32(2);
  const float* x = c.floats(c.pointer(0), static_cast<std::size_t>(n));
  float* out = c.floats(c.pointer(1), 1);
  if (x == nullptr || out == nullptr) return;
  double s = 0;
  for (int i = 0; i < n; ++i) s += x[i];
  out[0] = static_cast<float>(s);
  c.duration_ms = 2.0;
}

void partial_sums(FakeCall& c) {
  const int n = c.i32(2);
  const unsigned blocks = c.shape.grid[0];
  const float* x = c.floats(c.pointer(0), static_cast<std::size_t>(n));
  float* partials = c.floats(c.pointer(1), blocks + 1);
  if (x == nullptr || partials == nullptr) return;
  for (unsigned b = 0; b < blocks; ++b) {
    double s = 0;
    for (int i = static_cast<int>(b) * 256; i < n && i < static_cast<int>(b + 1) * 256; ++i) s += x[i];
    partials[b] = static_cast<float>(s);
  }
  c.duration_ms = 0.3;
}

// final_sum; from its `fault_at`-th call in a module instance on, an illegal address.
FakeKernel final_sum(int fault_at = 0) {
  return [fault_at](FakeCall& c) {
    const int n = c.i32(2);
    const std::size_t blocks = static_cast<std::size_t>((n + 255) / 256);
    float* partials = c.floats(c.pointer(0), blocks + 1);
    float* out = c.floats(c.pointer(1), 1);
    if (partials == nullptr || out == nullptr) return;
    double s = 0;
    for (std::size_t b = 0; b < blocks; ++b) s += partials[b];
    out[0] = static_cast<float>(s);
    c.duration_ms = 0.2;
    if (fault_at > 0 && static_cast<int>(++c.globals["calls"]) >= fault_at) c.status = sb::test::k_illegal_address;
  };
}

sb::test::HarnessOutcome evaluate_sum(FakeGpu& gpu, const FakeKernel& last = final_sum()) {
  const std::vector<sb::KernelParam> pointer_pointer_int{{0, 8}, {8, 8}, {16, 4}};
  gpu.add_module("fake:candidate", {{"partial_sums", partial_sums}, {"final_sum", last}},
                 {{"partial_sums", pointer_pointer_int}, {"final_sum", pointer_pointer_int}});
  gpu.add_module("fake:reference", {{"sum", sum_reference}});
  return sb::test::run_harness(gpu, sum_task(), 7, true, k_two_pass);
}

// A kernel that takes `ms` and, when `faults`, reads an illegal address.
FakeKernel plain(double ms, bool faults = false) {
  return [=](FakeCall& c) {
    c.duration_ms = ms;
    if (faults) c.status = sb::test::k_illegal_address;
  };
}

// One module "fake:m" with the kernels given, and their function handles.
std::map<std::string, sb::detail::FunctionHandle> load(FakeGpu& gpu, std::map<std::string, FakeKernel> kernels) {
  std::vector<std::string> names;
  for (const auto& [name, k] : kernels) names.push_back(name);
  gpu.add_module("fake:m", std::move(kernels));
  sb::detail::ModuleHandle m = nullptr;
  REQUIRE(gpu.load_module("fake:m", m) == 0);
  std::map<std::string, sb::detail::FunctionHandle> out;
  for (const std::string& name : names) REQUIRE(gpu.get_function(m, name, out[name]) == 0);
  return out;
}

sb::detail::DeviceStatus launch(FakeGpu& gpu, sb::detail::FunctionHandle f) {
  return gpu.launch(f, sb::detail::LaunchShape{}, nullptr, 0);
}

}  // namespace

// ---- (a) faults are reported asynchronously --------------------------------------------------------

TEST_CASE("fake rules (a): a fault surfaces after the launch, possibly after later launches succeeded",
          "[sandbox][fake_rules]") {
  FakeRules rules;
  rules.fault_latency_calls = 3;
  int surfaced_late = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    rules.seed = seed;
    FakeGpu gpu(rules);
    auto f = load(gpu, {{"bad", plain(0.01, true)}, {"good", plain(0.01)}});
    REQUIRE(launch(gpu, f["bad"]) == 0);  // the launch itself succeeds
    int accepted = 0;
    while (launch(gpu, f["good"]) == 0 && accepted < 10) ++accepted;
    CHECK(accepted <= rules.fault_latency_calls);
    surfaced_late += accepted > 0 ? 1 : 0;
    CHECK(gpu.kernels_skipped == accepted);  // accepted after the fault, never run
    CHECK(gpu.synchronize() == sb::test::k_illegal_address);
  }
  CHECK(surfaced_late > 0);  // the seeds cover faults that later launches did not report
  SECTION("a synchronisation reports it at once") {
    FakeGpu gpu(rules);
    auto f = load(gpu, {{"bad", plain(0.01, true)}});
    REQUIRE(launch(gpu, f["bad"]) == 0);
    CHECK(gpu.synchronize() == sb::test::k_illegal_address);
  }
}

TEST_CASE("fake rules (a): a candidate's fault reported by a later memset or event is still the candidate's",
          "[sandbox][fake_rules][harness]") {
  // final_sum faults in its second warm-up run (its 6th call: 2 trials at each of 2 size sets come
  // first). What reports it is the scratch poisoning before the next run or the warm-up's stop
  // event. A harness that checked those as its own calls blamed itself (an error, no verdict, as if
  // the device had failed) for the candidate's illegal address.
  for (const int latency : {0, 1, 3}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      FakeRules rules;
      rules.fault_latency_calls = latency;
      rules.seed = seed;
      FakeGpu gpu(rules);
      auto calls = std::make_shared<int>(0);
      const sb::test::HarnessOutcome o = evaluate_sum(gpu, [calls](FakeCall& c) {
        final_sum()(c);
        if (++*calls == 6) c.status = sb::test::k_illegal_address;
      });
      INFO("latency " << latency << ", seed " << seed << ": " << o.reply.dump());
      REQUIRE(verdict_of(o.result) == "runtime_error");
      CHECK(o.reply.at("cuda_error") == "CUDA_ERROR_ILLEGAL_ADDRESS");
      CHECK(o.reply.at("detail").get<std::string>().find("warm-up") != std::string::npos);
      CHECK(o.reply.at("restart") == true);
    }
  }
}

TEST_CASE("fake rules (a): a fault in the trials is reported for the trial it happened in",
          "[sandbox][fake_rules][harness]") {
  FakeRules rules;
  rules.fault_latency_calls = 3;
  FakeGpu gpu(rules);
  auto calls = std::make_shared<int>(0);
  const sb::test::HarnessOutcome o = evaluate_sum(gpu, [calls](FakeCall& c) {
    final_sum()(c);
    if (++*calls == 2) c.status = sb::test::k_illegal_address;
  });
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "runtime_error");
  CHECK(o.reply.at("detail").get<std::string>().find("trial 2,") != std::string::npos);
}

// ---- (b) a poisoned context refuses work ------------------------------------------------------------

TEST_CASE("fake rules (b): a poisoned context refuses memsets, copies and frees, and does none of them",
          "[sandbox][fake_rules]") {
  FakeGpu gpu;
  auto f = load(gpu, {{"bad", plain(0.01, true)}});
  sb::detail::DevicePtr p = 0;
  REQUIRE(gpu.allocate(64, p) == 0);
  REQUIRE(gpu.fill8(p, 0x11, 64) == 0);
  REQUIRE(launch(gpu, f["bad"]) == 0);
  REQUIRE(gpu.synchronize() == sb::test::k_illegal_address);
  CHECK(gpu.fill8(p, 0, 64) == sb::test::k_illegal_address);
  CHECK(gpu.memory(p, 64)[0] == 0x11);  // not scrubbed
  unsigned char back[64] = {};
  CHECK(gpu.download(back, p, 64) == sb::test::k_illegal_address);
  CHECK(gpu.upload(p, back, 64) == sb::test::k_illegal_address);
  CHECK(gpu.release(p) == sb::test::k_illegal_address);
  CHECK(gpu.live_allocations() == 1);  // not freed
  SECTION("idealised, the memset wrote and the free freed (what the fake did before)") {
    FakeGpu ideal(FakeRules::idealised());
    auto g = load(ideal, {{"bad", plain(0.01, true)}});
    REQUIRE(ideal.allocate(64, p) == 0);
    REQUIRE(launch(ideal, g["bad"]) == 0);
    REQUIRE(ideal.synchronize() == sb::test::k_illegal_address);
    ideal.fill8(p, 0, 64);
    CHECK(ideal.memory(p, 64)[0] == 0);
  }
}

TEST_CASE("fake rules (b): after a fault the harness asks for a fresh context: its scrub and frees did not happen",
          "[sandbox][fake_rules][harness]") {
  // The buffers the candidate saw stay allocated and unscrubbed on the poisoned context: a harness
  // that trusted its memsets (or ignored the frees' errors) would carry on in that context, and the
  // next evaluation would find the last one's buffers there. It must ask for a fresh runner.
  FakeGpu gpu;
  auto calls = std::make_shared<int>(0);
  const sb::test::HarnessOutcome o = evaluate_sum(gpu, [calls](FakeCall& c) {
    final_sum()(c);
    if (++*calls == 1) c.status = sb::test::k_illegal_address;
  });
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "runtime_error");
  CHECK(o.reply.at("restart") == true);
  CHECK(gpu.live_allocations() > 0);
  // The same context cannot run another evaluation: every call reports the sticky error.
  FakeGpu& same = gpu;
  const sb::test::HarnessOutcome next = evaluate_scale_add(same, 1.0, 2.0);
  CHECK_FALSE(verdict_of(next.result) == "correct");
}

// ---- (c) events: launch gap, resolution, jitter -------------------------------------------------------

TEST_CASE("fake rules (c): events include the launch gap, come in 0.5 us steps and jitter", "[sandbox][fake_rules]") {
  FakeRules rules;
  rules.duration_spread = 0.0;
  rules.cold_l2_penalty = 0.0;
  FakeGpu gpu(rules);
  auto f = load(gpu, {{"k", plain(0.005)}});  // 5 us
  std::vector<double> readings;
  for (int i = 0; i < 50; ++i) {
    REQUIRE(gpu.record_start() == 0);
    REQUIRE(launch(gpu, f["k"]) == 0);
    REQUIRE(gpu.record_stop() == 0);
    REQUIRE(gpu.synchronize() == 0);
    double ms = 0.0;
    REQUIRE(gpu.elapsed_ms(ms) == 0);
    readings.push_back(ms);
    const double steps = ms * 1e3 / rules.event_resolution_us;
    CHECK(steps == Approx(std::round(steps)).margin(1e-6));
  }
  const auto [lo, hi] = std::minmax_element(readings.begin(), readings.end());
  CHECK(*hi > *lo);  // jitter
  std::vector<double> sorted = readings;
  std::sort(sorted.begin(), sorted.end());
  const double median_us = sorted[sorted.size() / 2] * 1e3;
  CHECK(median_us == Approx(5.0 + rules.launch_gap_us).margin(1.0));  // the kernel and its launch gap
}

TEST_CASE("fake rules (c): under event jitter the stopping rule still stops for a short kernel",
          "[sandbox][fake_rules][harness]") {
  // A stopping rule that read the events' spread ran a 5 us kernel to max_reps: the events' jitter
  // alone kept the spread above the target. Only the honest fake shows it; the rule now reads
  // CUPTI's durations when CUPTI times the runs.
  FakeRules rules;
  rules.duration_spread = 0.002;
  FakeGpu gpu(rules);
  const sb::test::HarnessOutcome o = evaluate_scale_add(gpu, 0.005, 0.010, scale_add_task(20000, 0.05, 200));
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "correct");
  CHECK(o.result.candidate.runs < 200);
}

// ---- (d) activity buffers: late, in pieces, the last incomplete ---------------------------------------

TEST_CASE("fake rules (d): activity records arrive late, in pieces, and a forced flush leaves the newest incomplete",
          "[sandbox][fake_rules]") {
  FakeRules rules;
  rules.records_per_buffer = 4;
  FakeGpu gpu(rules);
  auto f = load(gpu, {{"k", plain(0.01)}});
  gpu.activity_reset();
  REQUIRE(gpu.push_external_id(7) == 0);
  for (int i = 0; i < 10; ++i) REQUIRE(launch(gpu, f["k"]) == 0);
  REQUIRE(gpu.pop_external_id() == 0);
  REQUIRE(gpu.synchronize() == 0);
  // Asking for all 10: the unforced flushes hand over the two full buffers, late; the open one's
  // newest record is never complete, so a forced flush ends the wait and that record is left out.
  const sb::detail::ActivityHarvest h = gpu.harvest_activity(10);
  CHECK(h.kernels.size() == 9);
  CHECK(gpu.activity_pieces == 3);
  CHECK(gpu.forced_flushes >= 1);
  for (const auto& k : h.kernels) {
    CHECK(k.external_id == 7);
    CHECK(sb::detail::kernel_record_usable(k.start_ns, k.end_ns));
  }
  CHECK(gpu.host_time_charged() >= std::chrono::milliseconds(2 * 19));  // it waited between its flushes
  SECTION("asking for fewer, the unforced flushes suffice and nothing is forced") {
    FakeGpu g(rules);
    auto k = load(g, {{"k", plain(0.01)}});
    g.activity_reset();
    const int forced = g.forced_flushes;
    REQUIRE(g.push_external_id(8) == 0);
    for (int i = 0; i < 10; ++i) REQUIRE(launch(g, k["k"]) == 0);
    REQUIRE(g.pop_external_id() == 0);
    REQUIRE(g.synchronize() == 0);
    CHECK(g.harvest_activity(8).kernels.size() == 8);
    CHECK(g.forced_flushes == forced);
  }
}

TEST_CASE("fake rules (d): a run whose record arrived incomplete is not paid for the rest of its plan",
          "[sandbox][fake_rules][harness]") {
  // final_sum's records arrive incomplete. Counted as present, a run would be timed by partial_sums
  // alone (0.3 ms of its 0.5): the candidate paid for part of its work. The harvest leaves them out,
  // and the harness times such runs by events.
  FakeGpu gpu;
  gpu.incomplete = "final_sum";
  const sb::test::HarnessOutcome o = evaluate_sum(gpu);
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "correct");
  CHECK(o.reply.at("timing").at("method") == "events");
  CHECK(o.result.candidate.median_ms > 0.5);
}

TEST_CASE("fake rules (d): records in pieces are all found: every run matched by id and timed by CUPTI",
          "[sandbox][fake_rules][harness]") {
  FakeGpu gpu;
  const sb::test::HarnessOutcome o = evaluate_sum(gpu);
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "correct");
  CHECK(gpu.activity_pieces > 2);
  const json& t = o.reply.at("timing");
  CHECK(t.at("method") == "cupti");
  CHECK(t.at("matched_by_id").get<std::size_t>() == 2 * t.at("reps").get<std::size_t>());
}

TEST_CASE("fake rules (d): without external ids, records in pieces still time every run by its window",
          "[sandbox][fake_rules][harness]") {
  FakeGpu gpu;
  gpu.external_ids = false;
  const sb::test::HarnessOutcome o = evaluate_sum(gpu);
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "correct");
  const json& t = o.reply.at("timing");
  CHECK(t.at("method") == "cupti");
  CHECK(t.at("matched_by_window").get<std::size_t>() == 2 * t.at("reps").get<std::size_t>());
}

// ---- (e) durations vary; the L2 flush matters ---------------------------------------------------------

TEST_CASE("fake rules (e): durations vary, and a kernel after a flush is slower than a warm one",
          "[sandbox][fake_rules]") {
  FakeGpu gpu;
  auto f = load(gpu, {{"k", plain(1.0)}});
  auto run_ms = [&](bool flush) {
    if (flush) REQUIRE(gpu.flush_caches() == 0);
    const std::uint64_t t0 = gpu.clock_ns();
    REQUIRE(launch(gpu, f["k"]) == 0);
    return static_cast<double>(gpu.clock_ns() - t0) * 1e-6;
  };
  std::vector<double> cold, warm;
  for (int i = 0; i < 40; ++i) {
    cold.push_back(run_ms(true));
    warm.push_back(run_ms(false));
  }
  std::sort(cold.begin(), cold.end());
  std::sort(warm.begin(), warm.end());
  CHECK(warm.front() < warm.back());  // variance
  CHECK(cold[20] > 1.15 * warm[20]);  // the L2 effect
}

TEST_CASE("fake rules (e): every timed run starts from a flushed L2, so each side's time is its cold time",
          "[sandbox][fake_rules][harness]") {
  // With the flush right before the timed launches, both kernels run cold: 1.25 and 2.5 ms. A flush
  // before the input draw (whose kernel warms the L2) or none would time them warm, 1.0 and 2.0 ms,
  // and a kernel whose work fits in L2 would gain against one whose does not.
  FakeGpu gpu;
  const sb::test::HarnessOutcome o = evaluate_scale_add(gpu, 1.0, 2.0);
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "correct");
  const double cold = 1.0 + gpu.rules().cold_l2_penalty;
  CHECK(o.result.candidate.median_ms == Approx(cold).epsilon(0.05));
  CHECK(o.result.reference.median_ms == Approx(2.0 * cold).epsilon(0.05));
  CHECK(o.result.speedup == Approx(2.0).epsilon(0.08));
}

// ---- (f) host time is charged to the deadline ---------------------------------------------------------

TEST_CASE("fake rules (f): the device's time presses on the evaluation's deadline", "[sandbox][fake_rules][harness]") {
  // 100 ms and 200 ms kernels under a 3 s limit: the trials alone are 1.2 s of device time and ten
  // timed run pairs 3 s more. Measured by the wall clock the fake's kernels take no time, and a
  // harness reading it would time every run; measured by the host's clock with the device's time
  // on it, the evaluation ends within its limit.
  FakeGpu gpu;
  const sb::TaskSpec task = scale_add_task(3000, 0.5, 40);
  const sb::test::HarnessOutcome o = evaluate_scale_add(gpu, 100.0, 200.0, task);
  INFO(o.reply.dump());
  REQUIRE(verdict_of(o.result) == "correct");
  CHECK(gpu.host_time_charged() < std::chrono::milliseconds(task.time_limit_ms));
  CHECK(gpu.host_time_charged() > std::chrono::milliseconds(1000));
  const bool untimed = std::isnan(o.result.speedup);
  const bool stopped = o.reply.at("timing").contains("stopped_early");
  CHECK((untimed || stopped));
  SECTION("idealised, no time passes and every run is timed (what the fake did before)") {
    FakeGpu ideal(FakeRules::idealised());
    const sb::test::HarnessOutcome i = evaluate_scale_add(ideal, 100.0, 200.0, task);
    CHECK(i.result.candidate.runs == 10);
    CHECK(ideal.host_time_charged() == std::chrono::nanoseconds(0));
  }
}

// ---- the draw check (item 4) ----------------------------------------------------------------------------

TEST_CASE("draw check: a device generator that agrees with its host twin passes", "[sandbox][draw_check]") {
  FakeGpu gpu;
  const sb::detail::DrawCheck c = sb::detail::check_device_draw(gpu);
  INFO(c.error);
  CHECK(c.ok);
  CHECK(c.cases == sb::detail::draw_check_sample().size());
  CHECK(c.elements > 100000);
  CHECK(gpu.live_allocations() == 0);
  CHECK(sb::detail::draw_check_refusal(c).empty());
}

TEST_CASE("draw check: a device draw that differs from the host twin is refused", "[sandbox][draw_check]") {
  SECTION("one element off in every draw") {
    FakeGpu gpu;
    gpu.generator_fault = [](unsigned char* bytes, std::size_t n) { bytes[n - 1] ^= 1; };
    const sb::detail::DrawCheck c = sb::detail::check_device_draw(gpu);
    CHECK_FALSE(c.ok);
    CHECK(c.error.find("differs from the host's in 1 elements") != std::string::npos);
    CHECK(sb::detail::draw_check_refusal(c).find("evaluates nothing") != std::string::npos);
  }
  SECTION("the tail never written (a grid too small)") {
    FakeGpu gpu;
    gpu.generator_fault = [](unsigned char* bytes, std::size_t n) { std::fill(bytes + n / 2, bytes + n, 0xA5); };
    CHECK_FALSE(sb::detail::check_device_draw(gpu).ok);
  }
  SECTION("a poisoned context") {
    FakeGpu gpu;
    auto f = load(gpu, {{"bad", plain(0.01, true)}});
    REQUIRE(launch(gpu, f["bad"]) == 0);
    const sb::detail::DrawCheck c = sb::detail::check_device_draw(gpu);
    CHECK_FALSE(c.ok);
    CHECK(c.error.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos);
  }
}

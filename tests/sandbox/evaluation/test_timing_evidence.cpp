// SPDX-License-Identifier: Apache-2.0
// The timing evidence of a result (how its runs were measured) from the runner's reply into
// EvalResult and its JSON, and the timing rules that evidence shows: a stopping rule that reads
// CUPTI's durations rather than jittery events, a warm-up that slow correctness trials do not
// starve, and a harvest that waits for and counts the plan's kernels only. On the CPU fake.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <leap/sandbox/evaluator.hpp>
#include <leap/sandbox/task.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "sanitizers.hpp"

#include "evaluation/activity_match.hpp"
#include "evaluation/gpu_harness.hpp"
#include "evaluation/runner_reply.hpp"
#include "event_jitter.hpp"
#include "fake_gpu_driver.hpp"
#include "harness_runner.hpp"
#include "../../../benchmarks/timing_run_check.hpp"  // bench_timing's rule

namespace sb = leap::sandbox;
using nlohmann::json;
using sb::detail::KernelActivity;
using sb::detail::RunWindow;
using sb::test::FakeCall;
using sb::test::FakeGpu;
using sb::test::FakeKernel;

namespace {

// These tests hold exact run counts and matches, and add the jitter they study themselves
// (EventJitter), so they run on the idealised fake; test_fake_rules.cpp holds the harness to the
// driver's real rules.
constexpr sb::test::FakeRules k_exact = sb::test::FakeRules::idealised();

// scale_add(x, y, out, alpha, n) on 4096 elements; two size sets checked, two trials each.
sb::TaskSpec task() {
  return sb::parse_task(R"json({
    "name": "scale_add", "description": "d", "entry": "scale_add",
    "params": [
      {"name": "x", "dtype": "float32", "role": "in", "shape": ["n"]},
      {"name": "y", "dtype": "float32", "role": "in", "shape": ["n"]},
      {"name": "out", "dtype": "float32", "role": "out", "shape": ["n"]},
      {"name": "alpha", "kind": "scalar", "dtype": "float32", "value": 1.75},
      {"name": "n", "kind": "scalar", "dtype": "int32", "value": "n"}],
    "sizes": {"n": 4096}, "check_sizes": [{"n": 1001}],
    "launch": {"grid": ["ceil_div(n, 1024)"], "block": [256]},
    "reference": "extern \"C\" __global__ void scale_add(const float*, const float*, float*, float, int) {}",
    "trials": 2,
    "timing": {"warmup": 3, "min_reps": 10, "max_reps": 40, "target_spread": 0.02, "budget_ms": 1500},
    "time_limit_ms": 20000})json");
}

void compute(FakeCall& c) {
  const int n = c.i32(4);
  float* x = c.floats(c.pointer(0), static_cast<std::size_t>(n));
  float* y = c.floats(c.pointer(1), static_cast<std::size_t>(n));
  float* out = c.floats(c.pointer(2), static_cast<std::size_t>(n));
  if (x == nullptr || y == nullptr || out == nullptr) return;
  for (int i = 0; i < n; ++i) out[i] = c.f32(3) * x[i] + y[i];
}

FakeKernel honest(double ms) {
  return [ms](FakeCall& c) {
    compute(c);
    c.duration_ms = ms;
  };
}

// The harness on `driver` (the fake, or a wrapper of it), through the wire format as the runner
// sends it; the fake's modules get the task's signature.
sb::test::HarnessOutcome run(FakeGpu& gpu, sb::detail::GpuDriver& driver, const sb::TaskSpec& t,
                             const FakeKernel& candidate, const FakeKernel& reference) {
  gpu.add_module("fake:candidate", {{"scale_add", candidate}});
  gpu.add_module("fake:reference", {{"scale_add", reference}});
  for (const char* module : {"fake:candidate", "fake:reference"})
    gpu.set_params(module, t.entry, FakeGpu::signature_params(t));
  sb::detail::EvaluationRequest request;
  request.task = sb::task_to_json(t);
  request.candidate = "fake:candidate";
  request.reference = "fake:reference";
  request.seed = 42;
  request.time = true;
  const sb::detail::EvaluationRequest sent = sb::detail::evaluation_request_from_json(sb::detail::to_json(request));
  sb::test::HarnessOutcome o;
  o.reply = sb::detail::to_json(sb::detail::run_evaluation(sent, driver, [](std::string_view) {}));
  sb::detail::read_runner_reply(sb::detail::evaluation_reply_from_json(o.reply), o.result);
  return o;
}

}  // namespace

TEST_CASE("timing evidence: every figure of the runner's reply is in the result, its JSON and the docs' names",
          "[sandbox][harness][timing]") {
  for (const bool ids : {true, false}) {
    DYNAMIC_SECTION("external ids " << (ids ? "on" : "off")) {
      FakeGpu gpu(k_exact);
      gpu.external_ids = ids;
      const sb::test::HarnessOutcome o = run(gpu, gpu, task(), honest(1.0), honest(2.0));
      INFO(o.reply.dump());
      REQUIRE(sb::test::verdict_of(o.result) == "correct");
      const json& t = o.reply.at("timing");
      const sb::TimingEvidence& e = o.result.timing_evidence;
      CHECK(e.method == "cupti");
      CHECK(e.stopping_rule_source == "cupti");
      CHECK(e.reps == t.at("reps").get<int>());
      CHECK(e.reps == 10);
      CHECK(e.checked_runs == e.reps);
      CHECK(e.matched_by_id == (ids ? 20u : 0u));
      CHECK(e.matched_by_window == (ids ? 0u : 20u));
      CHECK(e.dropped_records == 0);
      CHECK(e.warmup_candidate.launches == t.at("warmup").at("candidate").at("launches").get<int>());
      CHECK(e.warmup_candidate.gpu_ms >= 50.0);
      CHECK(e.warmup_reference.gpu_ms >= 50.0);
      CHECK(e.warmup_min_gpu_ms == 50.0);
      REQUIRE(e.floor.has_value());
      CHECK(e.floor->bytes == t.at("floor").at("bytes").get<std::uint64_t>());
      CHECK(e.floor->peak_bytes_per_s == gpu.peak_bandwidth);

      // The JSON (eval --json, serve, the fleet): docs/sandbox.md names matched_by_id and
      // matched_by_window as each result's; every other figure is there too.
      const json j = json::parse(sb::to_json(o.result));
      const json& timings = j.at("timings");
      CHECK(timings.at("method") == "cupti");
      CHECK(timings.at("stopping_rule_source") == "cupti");
      CHECK(timings.at("reps") == e.reps);
      CHECK(timings.at("checked_runs") == e.checked_runs);
      CHECK(timings.at("matched_by_id") == e.matched_by_id);
      CHECK(timings.at("matched_by_window") == e.matched_by_window);
      CHECK(timings.at("dropped_records") == 0);
      CHECK(timings.at("warmup").at("candidate").at("launches") == e.warmup_candidate.launches);
      CHECK(timings.at("warmup").at("reference").at("gpu_ms").get<double>() == Approx(e.warmup_reference.gpu_ms));
      CHECK(timings.at("warmup").at("min_gpu_ms") == 50.0);
      CHECK(timings.at("floor").at("floor_ms").get<double>() == Approx(e.floor->floor_ms));
      CHECK(timings.at("floor").at("headroom").get<double>() == Approx(e.floor->headroom));
      CHECK(timings.at("stopped_early").is_null());
      CHECK(timings.at("candidate").at("runs") == 10);
    }
  }
  SECTION("records lost: the count is in the JSON, and no run counts as matched") {
    FakeGpu gpu(k_exact);
    gpu.drop_every = 7;
    const sb::test::HarnessOutcome o = run(gpu, gpu, task(), honest(1.0), honest(2.0));
    REQUIRE(sb::test::verdict_of(o.result) == "correct");
    const json timings = json::parse(sb::to_json(o.result)).at("timings");
    CHECK(timings.at("method") == "events");
    CHECK(timings.at("dropped_records").get<int>() > 0);
    CHECK(timings.at("matched_by_id") == 0);
    CHECK(timings.at("matched_by_window") == 0);
  }
  SECTION("not timed: timings is null") {
    sb::EvalResult r;
    CHECK(json::parse(sb::to_json(r)).at("timings").is_null());
  }
}

TEST_CASE("timing: the stopping rule reads CUPTI's durations, not events carrying launch jitter",
          "[sandbox][harness][timing]") {
  // Events with up to 0.4 ms of jitter around a 1 ms kernel: their spread never gets near 2 %, so a
  // rule that read them ran every kernel to max_reps (40). CUPTI's durations are the kernel's own.
  SECTION("CUPTI on: steady at min_reps, by CUPTI, harvested once at the checkpoint") {
    FakeGpu gpu(k_exact);
    sb::test::EventJitter jittery(gpu, 0.4);
    const sb::test::HarnessOutcome o = run(gpu, jittery, task(), honest(1.0), honest(2.0));
    INFO(o.reply.dump());
    REQUIRE(sb::test::verdict_of(o.result) == "correct");
    CHECK(o.result.candidate.runs == 10);
    CHECK(o.result.timing_evidence.stopping_rule_source == "cupti");
    CHECK(o.result.speedup == Approx(2.0).epsilon(1e-3));
    CHECK(o.result.candidate.spread == 0.0);
    CHECK(o.result.candidate.events_median_ms > 1.0);  // the events did carry the jitter
    REQUIRE(jittery.harvests.size() == 1);
    CHECK(jittery.harvests[0].size() == 20);
  }
  SECTION("CUPTI off: events decide, and the jitter keeps timing to max_reps") {
    FakeGpu gpu(k_exact);
    gpu.activity_on = false;
    sb::test::EventJitter jittery(gpu, 0.4);
    const sb::test::HarnessOutcome o = run(gpu, jittery, task(), honest(1.0), honest(2.0));
    REQUIRE(sb::test::verdict_of(o.result) == "correct");
    CHECK(o.result.candidate.runs == 40);
    CHECK(o.result.timing_evidence.stopping_rule_source == "events");
    CHECK(o.result.candidate.method == "events");
  }
  SECTION("CUPTI loses records: the rule falls back to events for the rest of the runs") {
    FakeGpu gpu(k_exact);
    gpu.drop_every = 7;
    sb::test::EventJitter jittery(gpu, 0.4);
    const sb::test::HarnessOutcome o = run(gpu, jittery, task(), honest(1.0), honest(2.0));
    REQUIRE(sb::test::verdict_of(o.result) == "correct");
    CHECK(o.result.timing_evidence.stopping_rule_source == "events");
    CHECK(o.result.candidate.runs == 40);
  }
  SECTION("a genuinely noisy kernel still runs until CUPTI sees it steady, checked at growing intervals") {
    FakeGpu gpu(k_exact);
    int call = 0;
    const FakeKernel noisy = [&call](FakeCall& c) {
      compute(c);
      c.duration_ms = 1.0 + 0.3 * ((++call * 7) % 5);
    };
    sb::test::EventJitter jittery(gpu, 0.0);
    const sb::test::HarnessOutcome o = run(gpu, jittery, task(), noisy, honest(2.0));
    REQUIRE(sb::test::verdict_of(o.result) == "correct");
    CHECK(o.result.candidate.runs == 40);
    // Checkpoints at 10, 12, 15, 18, 22, 27, 33 and 41 (past max_reps): seven harvests in the loop,
    // then the last runs once more; each harvest asks only for runs not harvested before.
    std::size_t runs_asked = 0;
    for (const auto& h : jittery.harvests) runs_asked += h.size();
    CHECK(runs_asked == 80);
    CHECK(jittery.harvests.size() == 8);
  }
}

TEST_CASE("timing: slow correctness trials do not starve the warm-up", "[sandbox][harness][timing]") {
  // Each checked call sleeps 60 ms of host time: the four trials of each side take about 0.5 s of a
  // 2 s limit (1.6 s for the harness), past the quarter that used to cap the warm-up from the
  // evaluation's start and left each kernel 3 launches. Measured from the warm-up's own start, both
  // get their 50 ms of GPU time. Under a sanitizer each fake launch costs several times the host time,
  // so the sleeps and the limit are stretched alike: the proportions, which the test is about, stay.
  constexpr int stretch = leap_test::k_sanitizer ? 5 : 1;
  auto slow_when_checked = [](std::shared_ptr<int> calls, double ms) {
    return [calls, ms](FakeCall& c) {
      compute(c);
      if (++*calls <= 4) std::this_thread::sleep_for(std::chrono::milliseconds(60 * stretch));
      c.duration_ms = ms;
    };
  };
  FakeGpu gpu(k_exact);
  sb::TaskSpec t = task();
  t.time_limit_ms = 2000 * stretch;
  const sb::test::HarnessOutcome o = run(gpu, gpu, t, slow_when_checked(std::make_shared<int>(0), 0.01),
                                         slow_when_checked(std::make_shared<int>(0), 0.02));
  INFO(o.reply.dump());
  REQUIRE(sb::test::verdict_of(o.result) == "correct");
  CHECK(o.result.timing_evidence.warmup_candidate.gpu_ms >= 50.0);
  CHECK(o.result.timing_evidence.warmup_reference.gpu_ms >= 50.0);
  CHECK(o.result.timing_evidence.warmup_candidate.launches > 3);
}

TEST_CASE("CUPTI records: a run's records, and a harvest that counts the plan's kernels only",
          "[sandbox][harness][timing]") {
  // Two timed runs of a two-kernel plan, windows [100, 200] and [300, 400]; the harness's own
  // kernels (input generator, flush, comparison) run between them, outside every window, without an id.
  const std::vector<RunWindow> runs = {{100, 200, 7, 2}, {300, 400, 8, 2}};
  const std::vector<KernelActivity> harness_own = {
      {50, 60, 0}, {70, 90, 0}, {210, 220, 0}, {250, 290, 0}, {410, 420, 0}};
  SECTION("without ids: the windows decide, and the harness's kernels never count") {
    std::vector<KernelActivity> records = harness_own;
    records.push_back({110, 150, 0});
    CHECK(sb::detail::plan_records_delivered(records, runs) == 1);  // 6 records, 1 of the plan's
    records.push_back({150, 190, 0});
    records.push_back({305, 330, 0});
    CHECK(sb::detail::plan_records_delivered(records, runs) == 3);
    records.push_back({330, 390, 0});
    CHECK(sb::detail::plan_records_delivered(records, runs) == 4);
    const sb::detail::RunRecords first = sb::detail::records_of_run(records, runs[0], false);
    CHECK(first.complete(runs[0]));
    CHECK(first.ms() == Approx(80e-6));
  }
  SECTION("with ids: only a run's own id counts, even for a record inside its window") {
    std::vector<KernelActivity> records = harness_own;
    records.push_back({110, 150, 7});
    records.push_back({150, 190, 0});  // in run 1's window, but without its id
    records.push_back({305, 330, 8});
    records.push_back({330, 390, 8});
    records.push_back({331, 391, 9});  // another run's id
    REQUIRE(sb::detail::records_carry_ids(records));
    CHECK(sb::detail::plan_records_delivered(records, runs) == 3);
    CHECK_FALSE(sb::detail::records_of_run(records, runs[0], true).complete(runs[0]));
    CHECK(sb::detail::records_of_run(records, runs[1], true).complete(runs[1]));
  }
  SECTION("a run counts at most its plan's kernels") {
    const std::vector<KernelActivity> records = {{110, 120, 0}, {120, 130, 0}, {130, 140, 0}};
    CHECK(sb::detail::plan_records_delivered(records, runs) == 2);
  }
  SECTION("the harness asks each harvest for the timed runs' plan kernels alone") {
    FakeGpu gpu(k_exact);
    gpu.external_ids = false;
    sb::test::EventJitter driver(gpu, 0.0);
    const sb::test::HarnessOutcome o = run(gpu, driver, task(), honest(1.0), honest(2.0));
    REQUIRE(sb::test::verdict_of(o.result) == "correct");
    CHECK(driver.plain_harvests == 0);
    std::size_t kernels = 0;
    for (const auto& h : driver.harvests)
      for (const RunWindow& r : h) kernels += r.kernels;
    CHECK(kernels == 2u * static_cast<std::size_t>(o.result.timing_evidence.reps));
    CHECK(o.result.timing_evidence.matched_by_window == 20);
  }
}

TEST_CASE("bench_timing: a run fails unless the kernel is correct and timed by the method expected",
          "[sandbox][timing]") {
  FakeGpu gpu(k_exact);
  const sb::test::HarnessOutcome o = run(gpu, gpu, task(), honest(1.0), honest(2.0));
  REQUIRE(sb::test::verdict_of(o.result) == "correct");
  CHECK(leap_bench::timing_run_failure(o.result, "cupti").empty());
  CHECK(leap_bench::timing_run_failure(o.result, "events").find("timed by cupti/cupti, not events") == 0);

  FakeGpu off(k_exact);
  off.activity_on = false;
  const sb::test::HarnessOutcome events = run(off, off, task(), honest(1.0), honest(2.0));
  CHECK(leap_bench::timing_run_failure(events.result, "cupti").find("timed by events/events, not cupti") == 0);
  CHECK(leap_bench::timing_run_failure(events.result, "events").empty());

  FakeGpu wrong(k_exact);
  const sb::test::HarnessOutcome w = run(
      wrong, wrong, task(), [](FakeCall& c) { c.duration_ms = 1.0; }, honest(2.0));
  REQUIRE(sb::test::verdict_of(w.result) == "wrong_answer");
  CHECK(leap_bench::timing_run_failure(w.result, "cupti").find("not correct: wrong_answer") == 0);

  sb::EvalResult no_gpu;
  no_gpu.status = sb::EvalStatus::no_gpu;
  CHECK(leap_bench::timing_run_failure(no_gpu, "cupti").find("no verdict (no_gpu)") != std::string::npos);
}

// SPDX-License-Identifier: Apache-2.0
// `tasks measure`'s GPU half, on a device made of the CPU runtime (cpu_runtime_gpu.hpp), which runs the
// real references and follows the driver's rules: a built-in reference at a reduced copy of its timing
// sizes agrees with its oracle and is timed from flushed caches, the runs starting from poisoned outs
// and restored inouts; a planted bug fails naming the task, the sizes and the first differing
// element; a reference right only on its first run fails after the timed runs; a kernel's fault is
// the driver's error, and the device is left with nothing allocated or loaded; shared memory past
// 48 KiB is opted in to first.
#include <catch2/catch.hpp>

#include <cuda.h>

#include <string>

#include "device_test_support.hpp"
#include "verify/nvrtc_check.hpp"

namespace {

namespace sb = leap::sandbox;
namespace vf = leap::sandbox::verify;
using leap::sandbox::test::CpuRuntimeGpu;

vf::ModuleCache& cache() { return leap::sandbox::test::verify_cache(); }
vf::VerifyTarget small(const std::string& name) { return leap::sandbox::test::small_task(name); }
vf::MeasureReport measure(CpuRuntimeGpu& gpu, const vf::VerifyTarget& target, bool time = true) {
  return leap::sandbox::test::measure_on_cpu_device(gpu, target, time);
}

const vf::CheckResult* check(const vf::MeasureReport& r, const std::string& name) {
  for (const vf::CheckResult& c : r.checks.checks)
    if (c.name == name) return &c;
  return nullptr;
}

// The detail of check `name`, which must be there and must have failed.
std::string failed_detail(const vf::MeasureReport& r, const std::string& name) {
  const vf::CheckResult* c = check(r, name);
  REQUIRE(c != nullptr);
  INFO(c->detail);
  CHECK_FALSE(c->ok);
  return c->detail;
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("measure: row_sum's reference agrees with its oracle at its timing sizes and is timed", "[measure]") {
  CpuRuntimeGpu gpu(cache());
  gpu.peak_bandwidth = 1e9;
  const vf::VerifyTarget target = small("row_sum");
  const vf::MeasureReport r = measure(gpu, target);
  INFO(vf::to_text(r));
  CHECK(r.ok());
  for (const char* name :
       {"compile:reference:device", "reference_vs_oracle:timing", "reference_vs_oracle:after_timing"})
    CHECK(check(r, name) != nullptr);
  CHECK(r.times.reps == 3);
  CHECK(r.times.min_ms <= r.times.median_ms);
  CHECK(r.times.median_ms <= r.times.max_ms);
  CHECK(gpu.flushes == 3);           // every timed run from flushed caches
  CHECK(gpu.launches == 1 + 1 + 3);  // the checked run, the warm-up, the timed runs
  const std::int64_t rows = target.spec.sizes.at("rows"), cols = target.spec.sizes.at("cols");
  CHECK(r.bytes == rows * cols * 4 + rows * 4);
  CHECK(r.floor_ms == Approx(1e3 * static_cast<double>(r.bytes) / 1e9));
  CHECK(gpu.live_allocations() == 0);
  CHECK(gpu.loaded_modules() == 0);
  const nlohmann::json j = vf::to_json(r);
  CHECK(j.at("time").at("reps") == 3);
  CHECK(j.at("ok") == true);
  CHECK(vf::to_text(r).rfind("PASS row_sum", 0) == 0);
}

TEST_CASE("measure: a loss whose output is an inout running total gives the same answer on every timed run",
          "[measure]") {
  CpuRuntimeGpu gpu(cache());
  const vf::MeasureReport r = measure(gpu, small("mse_loss"));
  INFO(vf::to_text(r));
  CHECK(r.ok());  // without restoring the total before each run, the last run would have added it up 5 times
  const vf::CheckResult* c = check(r, "reference_vs_oracle:after_timing");
  REQUIRE(c != nullptr);
  CHECK(c->ok);
}

TEST_CASE("measure: a planted bug fails, naming the task, the timing sizes and the first differing element",
          "[measure]") {
  SECTION("an index off by one") {
    vf::VerifyTarget t = small("transpose");
    t.spec.reference_source = replaced(t.spec.reference_source, "c) * rows + r", "c) * (rows - 1) + r");
    CpuRuntimeGpu gpu(cache());
    const vf::MeasureReport r = measure(gpu, t);
    const std::string detail = failed_detail(r, "reference_vs_oracle:timing");
    CHECK(detail.find("task 'transpose'") != std::string::npos);
    CHECK(detail.find("timing {") != std::string::npos);
    CHECK(detail.find("first at [") != std::string::npos);
    CHECK(r.times.reps == 0);  // a wrong reference is not timed
    CHECK(vf::to_text(r).rfind("FAIL transpose", 0) == 0);
  }
  SECTION("a dropped tail") {
    vf::VerifyTarget t = small("scale_add");
    t.spec.reference_source = replaced(t.spec.reference_source, "< n", "< n - 1");
    CpuRuntimeGpu gpu(cache());
    const vf::MeasureReport r = measure(gpu, t);
    CHECK_FALSE(r.ok());
    CHECK(failed_detail(r, "reference_vs_oracle:timing").find("task 'scale_add'") != std::string::npos);
  }
}

TEST_CASE("measure: a reference right only on its first run fails after the timed runs", "[measure]") {
  vf::VerifyTarget t = small("row_sum");
  // A global that outlives the launch: the last block of the first run sets it, every later run is off by one.
  t.spec.reference_source =
      "__device__ int leap_runs_done;\n" + replaced(t.spec.reference_source, "out[row] = partial[0];",
                                                    "out[row] = partial[0] + leap_runs_done;\n"
                                                    "  if (threadIdx.x == 0 && row == rows - 1) leap_runs_done = 1;");
  CpuRuntimeGpu gpu(cache());
  const vf::MeasureReport r = measure(gpu, t);
  INFO(vf::to_text(r));
  const vf::CheckResult* first = check(r, "reference_vs_oracle:timing");
  const vf::CheckResult* after = check(r, "reference_vs_oracle:after_timing");
  REQUIRE(first != nullptr);
  REQUIRE(after != nullptr);
  CHECK(first->ok);
  CHECK_FALSE(after->ok);
  CHECK(after->detail.find("after 3 timed runs") != std::string::npos);
  CHECK(after->detail.find("first at [") != std::string::npos);
}

TEST_CASE("measure: a kernel's fault is the driver's error, and nothing is left on the device", "[measure]") {
  vf::VerifyTarget t = small("scale_add");
  t.spec.reference_source = replaced(t.spec.reference_source, "< n", "< n) __trap();\n  if (i < n");
  CpuRuntimeGpu gpu(cache());
  const vf::MeasureReport r = measure(gpu, t);
  const std::string detail = failed_detail(r, "reference_vs_oracle:timing");
  CHECK(detail.find("running the plan: CUDA_ERROR_ILLEGAL_INSTRUCTION") != std::string::npos);
  CHECK(detail.find("trap") != std::string::npos);  // the runtime's account, as the driver's sentence
  CHECK(gpu.live_allocations() == 0);
  CHECK(gpu.loaded_modules() == 0);
}

TEST_CASE("measure: a reference that does not compile for the device fails its compile check", "[measure]") {
  const vf::VerifyTarget t = small("scale_add");
  CpuRuntimeGpu gpu(cache());
  vf::MeasureOptions options;
  const vf::PreparedMeasure prepared = vf::prepare_measure(t, cache(), options);
  const vf::MeasureReport r = vf::measure_on_device(
      gpu,
      [](const std::string&) {
        return vf::DeviceImage{{}, "NVRTC refused it: error: expected a ';'"};
      },
      t, prepared, options);
  CHECK(failed_detail(r, "compile:reference:device").find("expected a ';'") != std::string::npos);
  CHECK(check(r, "reference_vs_oracle:timing") == nullptr);
}

TEST_CASE("measure: a launch above 48 KiB of shared memory is opted in first, and refused past the device's limit",
          "[measure]") {
  vf::VerifyTarget t = small("row_sum");
  // The partial sums in 64 KiB of dynamic shared memory (only the first 256 floats used).
  t.spec.reference_source =
      replaced(t.spec.reference_source, "__shared__ float partial[256];", "extern __shared__ float partial[];");
  t.spec.launch.shared_bytes = "65536";
  SECTION("opted in") {
    CpuRuntimeGpu gpu(cache());
    const vf::MeasureReport r = measure(gpu, t, false);
    INFO(vf::to_text(r));
    CHECK(r.ok());
    CHECK(gpu.opt_ins >= 1);
    CHECK(r.times.reps == 0);  // not timed when not asked
    CHECK(check(r, "reference_vs_oracle:after_timing") == nullptr);
  }
  SECTION("a device whose opt-in limit is 48 KiB") {
    CpuRuntimeGpu gpu(cache());
    gpu.shared_optin = 48 * 1024;
    const vf::MeasureReport r = measure(gpu, t, false);
    CHECK(failed_detail(r, "reference_vs_oracle:timing").find("launch plan refused") != std::string::npos);
  }
}

TEST_CASE("cpu runtime gpu: follows the driver's rules for memory, launches and faults", "[measure]") {
  namespace dt = leap::sandbox::detail;
  CpuRuntimeGpu gpu(cache());
  dt::DevicePtr p = 0;
  CHECK(gpu.allocate(0, p) == CUDA_ERROR_INVALID_VALUE);
  REQUIRE(gpu.allocate(100, p) == CUDA_SUCCESS);
  CHECK(p % 256 == 0);
  unsigned char bytes[128] = {};
  CHECK(gpu.upload(p, bytes, 100) == CUDA_SUCCESS);
  CHECK(gpu.upload(p + 50, bytes, 51) == CUDA_ERROR_INVALID_VALUE);  // one byte past the allocation
  CHECK(gpu.download(bytes, p + 1, 99) == CUDA_SUCCESS);
  CHECK(gpu.fill32(p + 2, 0, 1) == CUDA_ERROR_INVALID_VALUE);  // misaligned for 32-bit words
  double ms = 0;
  CHECK(gpu.elapsed_ms(ms) == CUDA_ERROR_INVALID_HANDLE);  // no events recorded yet

  dt::ModuleHandle m = nullptr;
  CHECK(gpu.load_module("this is not a module", m) == CUDA_ERROR_INVALID_IMAGE);
  REQUIRE(gpu.load_module("extern \"C\" __global__ void k(int* out) {\n"
                          "  if (threadIdx.x == 3) __trap();\n"
                          "  out[threadIdx.x] = 1;\n"
                          "}\n",
                          m) == CUDA_SUCCESS);
  dt::FunctionHandle f = nullptr;
  CHECK(gpu.get_function(m, "missing", f) == CUDA_ERROR_NOT_FOUND);
  REQUIRE(gpu.get_function(m, "k", f) == CUDA_SUCCESS);
  void* args[] = {&p};
  dt::LaunchShape big;
  big.block[0] = 2;
  big.shared_bytes = 64 * 1024;
  CHECK(gpu.launch(f, big, args, 1) == CUDA_ERROR_INVALID_VALUE);  // past 48 KiB without opting in
  dt::LaunchShape wide;
  wide.block[0] = 1025;
  CHECK(gpu.launch(f, wide, args, 1) == CUDA_ERROR_INVALID_VALUE);
  dt::LaunchShape shape;
  shape.block[0] = 8;
  CHECK(gpu.launch(f, shape, args, 1) == CUDA_SUCCESS);  // asynchronous: the fault comes later
  CHECK(gpu.synchronize() == CUDA_ERROR_ILLEGAL_INSTRUCTION);
  CHECK(gpu.upload(p, bytes, 4) == CUDA_ERROR_ILLEGAL_INSTRUCTION);  // the context is lost for good
  CHECK(gpu.synchronize() == CUDA_ERROR_ILLEGAL_INSTRUCTION);
  CHECK(gpu.release(p) == CUDA_ERROR_ILLEGAL_INSTRUCTION);
  CHECK(gpu.live_allocations() == 0);
  CHECK(gpu.unload_module(m) == CUDA_ERROR_ILLEGAL_INSTRUCTION);
  CHECK(gpu.loaded_modules() == 0);
}

TEST_CASE("measure: timing stops at the task's spread, its repetitions or its budget, as the harness does",
          "[measure]") {
  vf::VerifyTarget t = small("scale_add");
  t.spec.timing.min_reps = 4;
  t.spec.timing.max_reps = 12;
  SECTION("a spread any runs meet: the least repetitions") {
    t.spec.timing.target_spread = 1e9;
    CpuRuntimeGpu gpu(cache());
    CHECK(measure(gpu, t).times.reps == 4);
  }
  SECTION("a spread no runs meet, and budget left: the most repetitions") {
    t.spec.timing.target_spread = 0;
    t.spec.timing.budget_ms = 600000;
    CpuRuntimeGpu gpu(cache());
    const vf::MeasureReport r = measure(gpu, t);
    // Wall-clock runs on a shared machine are never equal to the nanosecond, so the spread stays above 0.
    CHECK(r.times.reps == 12);
    CHECK(r.times.spread > 0);
  }
  SECTION("the budget spent: the least repetitions") {
    vf::VerifyTarget slow = small("row_sum");  // a run of tens of milliseconds on the CPU runtime
    slow.spec.timing.min_reps = 4;
    slow.spec.timing.max_reps = 12;
    slow.spec.timing.target_spread = 0;
    slow.spec.timing.budget_ms = 1;  // spent by the first run
    CpuRuntimeGpu gpu(cache());
    const vf::MeasureReport r = measure(gpu, slow);
    REQUIRE(r.times.min_ms > 1);
    CHECK(r.times.reps == 4);
  }
}

TEST_CASE("measure: the references compile for the device's target in one batch, each in its place", "[measure]") {
  // What tasks measure does before the device runs anything: NVRTC on every reference, several at a time.
  const std::vector<std::string> sources = {small("scale_add").spec.reference_source, "this is not CUDA",
                                            small("row_sum").spec.reference_source};
  const std::vector<vf::NvrtcOutcome> out = vf::nvrtc_compile_all(sources, cache().dir(), "sm_90a");
  REQUIRE(out.size() == 3);
  for (std::size_t i : {0u, 2u}) {
    INFO(out[i].log);
    CHECK(out[i].compiled);
    CHECK(out[i].cubin.size() > 4);
    CHECK(out[i].cubin.compare(0, 4,
                               "\x7f"
                               "ELF") == 0);
  }
  CHECK_FALSE(out[1].compiled);
  CHECK(out[1].source_error);  // NVRTC's verdict on the source
  CHECK(out[1].cubin.empty());
}

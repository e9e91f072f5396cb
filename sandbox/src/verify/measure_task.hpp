// SPDX-License-Identifier: Apache-2.0
// `leap-sandbox tasks measure` for one task, on a GPU (docs/tasks.md#on-a-gpu): the reference run at
// the task's full timing sizes, which the CPU runtime only ever sees reduced, checked against the
// task's oracle through the sandbox's own comparison, then timed. What a full size alone can break
// shows here: an index past 2^31, a grid dimension past its limit, shared memory the device refuses.
// Two halves, so a caller can run the oracles (host CPU, the slow half) on several threads while one
// thread owns the device: prepare_measure draws the trial and runs the oracle; measure_on_device
// runs the reference and compares. Internal.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "evaluation/gpu_driver.hpp"
#include "verify/device_run.hpp"
#include "verify/module_cache.hpp"
#include "verify/oracle_run.hpp"
#include "verify/report.hpp"
#include "verify/verify_target.hpp"

namespace leap::sandbox::verify {

struct MeasureOptions {
  std::uint64_t seed = 1;  // of the trial's inputs (the first trial `tasks verify` would draw at these sizes)
  bool time = true;
};

// The CPU half: the trial at the timing sizes and the oracle's answer to it.
struct PreparedMeasure {
  std::string label;  // "timing {m=4096, n=4096, k=4096}"
  Trial trial;
  OracleRun oracle;
  std::string failure;  // empty: ready for the device; else why not (no oracle, it failed to compile or run)
  double oracle_seconds = 0.0;
};
PreparedMeasure prepare_measure(const VerifyTarget& target, ModuleCache& cache, const MeasureOptions& options);

// What a driver loads for a source (a CUBIN for the device at hand), or why there is none.
struct DeviceImage {
  std::string image;
  std::string error;
};
using ImageOf = std::function<DeviceImage(const std::string& source)>;

struct MeasureReport {
  TaskReport checks;  // spec, compile:reference:device, reference_vs_oracle:timing
  DeviceTimes times;  // reps 0 when not timed (or the check failed first)
  double oracle_seconds = 0.0;
  std::int64_t bytes = 0;  // the task's bytes and flops at its timing sizes (its size expressions)
  std::int64_t flops = 0;
  double floor_ms = 0.0;  // bytes at the device's peak bandwidth; 0 when the device does not say
  bool ok() const noexcept { return checks.ok(); }
};

// One of a task's library figures (its bytes or flops size expression) at `sizes`; 0 when the task has
// none, or when it overflows there (the expression was validated with the task).
std::int64_t library_figure(const std::string& expr, const Sizes& sizes);

// The GPU half: compiles the reference with `image_of`, runs it on `prepared`'s trial, compares it
// with the oracle and, with options.time, times it.
MeasureReport measure_on_device(detail::GpuDriver& gpu, const ImageOf& image_of, const VerifyTarget& target,
                                const PreparedMeasure& prepared, const MeasureOptions& options);

// "PASS matmul  1.234 ms (median of 50, min 1.201; floor 0.012 ms, 9.8x)  oracle 12.1 s", then the
// failed checks' lines.
std::string to_text(const MeasureReport& report);
nlohmann::json to_json(const MeasureReport& report);

}  // namespace leap::sandbox::verify

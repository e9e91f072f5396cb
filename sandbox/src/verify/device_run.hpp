// SPDX-License-Identifier: Apache-2.0
// A trusted source's kernels run on a GPU (any GpuDriver) for one trial: the trial's inputs uploaded,
// out buffers and scratch poisoned as the GPU runner poisons them, the plan launched once and its
// outputs brought back; then, when asked, timed. This is for the task library's own references on a
// lent GPU (`tasks measure`), never for a candidate: a candidate runs only inside the confined GPU
// runner, through the harness. Internal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "evaluation/gpu_driver.hpp"
#include "verify/kernel_run.hpp"

namespace leap::sandbox::verify {

// How long to time, as the GPU runner's harness decides it (the task's TimingSettings): at least
// min_reps runs after `warmup`, then more until the spread (p75 - p25) / median is at most
// target_spread, or max_reps runs, or budget_ms of measured time; each run from flushed caches.
struct DeviceTiming {
  int warmup = 3;
  int min_reps = 10;
  int max_reps = 200;
  double target_spread = 0.02;
  double budget_ms = 1500;
};
DeviceTiming timing_of(const TaskSpec& task);

struct DeviceTimes {
  int reps = 0;  // 0: not timed
  double median_ms = 0, min_ms = 0, max_ms = 0;
  double spread = 0;  // (p75 - p25) / median
};

struct DeviceRun {
  std::string failure;         // empty: ran; else the driver call that failed and its error, or a refused plan
  std::vector<Bytes> outputs;  // by parameter: the out and inout buffers after the first run; empty for others
  DeviceTimes times;           // when timing was asked for and the run succeeded
  // The same buffers after the last timed run (each run starts from poisoned outs and restored
  // inouts): a race or a stale read that shows only on the device, or only on a later run, shows here.
  std::vector<Bytes> outputs_after_timing;
  bool ok() const noexcept { return failure.empty(); }
};

// Loads `image` (what the driver's load_module takes: a CUBIN for the real driver), runs `plan` once
// on the trial and, with `time`, times it. Every allocation is released and the module unloaded,
// whatever happened.
DeviceRun run_on_device(detail::GpuDriver& gpu, std::string_view image, const SourcePlan& plan, const TaskSpec& task,
                        const Trial& trial, std::uint64_t poison_seed, const DeviceTiming* time);

}  // namespace leap::sandbox::verify

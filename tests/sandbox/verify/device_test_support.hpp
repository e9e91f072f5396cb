// SPDX-License-Identifier: Apache-2.0
// What the tests of the device path on the CPU runtime share: the module cache, a built-in task at
// its reduced timing sizes, and one `tasks measure` of it on a CpuRuntimeGpu (whose module image is the
// source itself).
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "cpu_runtime_gpu.hpp"
#include "leap/sandbox/builtin_tasks.hpp"
#include "verify/measure_task.hpp"
#include "verify/reduced_sizes.hpp"

namespace leap::sandbox::test {

inline verify::ModuleCache& verify_cache() {
  static verify::ModuleCache c(LEAP_VERIFY_TEST_CACHE);
  return c;
}

// A built-in task with its timing sizes reduced as `tasks verify` reduces them, and fewer timed runs:
// the CPU runtime runs at host speed.
inline verify::VerifyTarget small_task(const std::string& name) {
  const BuiltinTask* t = find_builtin_task(name);
  REQUIRE(t != nullptr);
  verify::VerifyTarget target = verify::target_of(*t);
  target.spec.sizes = verify::reduced_timing_sizes(target.spec);
  target.spec.timing.warmup = 1;
  target.spec.timing.min_reps = 3;
  target.spec.timing.max_reps = 3;
  return target;
}

inline verify::MeasureReport measure_on_cpu_device(CpuRuntimeGpu& gpu, const verify::VerifyTarget& target,
                                                   bool time = true) {
  verify::MeasureOptions options;
  options.time = time;
  const verify::PreparedMeasure prepared = verify::prepare_measure(target, verify_cache(), options);
  const verify::ImageOf source_image = [](const std::string& source) { return verify::DeviceImage{source, {}}; };
  return verify::measure_on_device(gpu, source_image, target, prepared, options);
}

}  // namespace leap::sandbox::test

// SPDX-License-Identifier: Apache-2.0
// The real GpuDriver: the CUDA driver dlopen'ed (never linked), CUPTI kernel activity, and the
// harness's input-generator kernel compiled with NVRTC for the device at hand. Internal; runs only
// inside a runner process.
#pragma once

#include <memory>
#include <string>

#include "evaluation/gpu_driver.hpp"
#include "evaluation/gpu_runner.hpp"

namespace leap::sandbox::detail {

// The GPU of `config.device`, ready to run kernels; nullptr with `error` saying why not.
// LEAP_SANDBOX_TIMER=events in the environment leaves CUPTI off (CUDA events only).
std::unique_ptr<GpuDriver> open_cuda_driver(const GpuRunnerConfig& config, std::string& error);

}  // namespace leap::sandbox::detail

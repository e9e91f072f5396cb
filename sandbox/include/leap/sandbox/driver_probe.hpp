// SPDX-License-Identifier: Apache-2.0
// Is there a usable GPU? Answered without linking or initialising the CUDA driver in this process.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace leap::sandbox {

enum class GpuState {
  available,    // the driver initialised and found at least one device
  no_driver,    // libcuda.so.1 could not be loaded
  stub_driver,  // the toolkit's stub libcuda was loaded (cuInit = CUDA_ERROR_STUB_LIBRARY, 34)
  no_device,    // the driver loaded but reports no device (cuInit = 100, or a count of 0)
  error,        // anything else: cuInit failed otherwise, the probe crashed or timed out
};

std::string_view to_string(GpuState state) noexcept;

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;  // compute capability, e.g. 9.0 -> sm_90
  int cc_minor = 0;
  unsigned long long total_memory = 0;  // bytes
  // CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: device code can read and write the host's pageable
  // memory, the GPU runner's included. The runner refuses to evaluate on such a device unless
  // GpuRunnerConfig::allow_pageable_host_access is set.
  bool pageable_memory_access = false;
};

struct GpuStatus {
  GpuState state = GpuState::error;
  int driver_version = 0;  // as cuDriverGetVersion reports it (13000 = 13.0); 0 when unknown
  std::vector<DeviceInfo> devices;
  std::string reason;  // why there is no GPU, in words; empty when available
  bool ok() const noexcept { return state == GpuState::available; }
};

struct ProbeOptions {
  std::string library = "libcuda.so.1";      // what to dlopen; tests point it at the toolkit's stub
  std::chrono::milliseconds timeout{20000};  // a wedged driver is reported as an error after this
};

// Loads the driver and calls cuInit in a short-lived forked child, so this process never initialises
// CUDA (GPU runners started later stay clean) and a crashing driver cannot take it down. The
// child only dlopens, queries and writes to a pipe; the parent kills it if it outlives the timeout.
// Never throws for a missing or broken driver: that is the status.
GpuStatus probe_gpu(const ProbeOptions& options = {});

}  // namespace leap::sandbox

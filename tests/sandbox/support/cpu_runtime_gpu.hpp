// SPDX-License-Identifier: Apache-2.0
// A GpuDriver whose kernels are real trusted CUDA sources run on the CPU runtime, for testing what the
// GPU path does with the task library's references (tasks measure) on a machine without a GPU.
// A module image is the source text itself (compiled for the CPU runtime through a ModuleCache);
// device memory is host memory. It follows the CUDA driver's rules where the tested code could break
// them (cuda.h's CUresult values throughout):
//   - cuMemAlloc: a size of 0 is CUDA_ERROR_INVALID_VALUE; memory is aligned to 256 bytes;
//   - copies and fills must lie inside one allocation (CUDA_ERROR_INVALID_VALUE otherwise), and a
//     freed or unknown pointer is CUDA_ERROR_INVALID_VALUE;
//   - cuModuleGetFunction of a missing kernel is CUDA_ERROR_NOT_FOUND; an image that is not a module
//     is CUDA_ERROR_INVALID_IMAGE;
//   - cuLaunchKernel refuses (CUDA_ERROR_INVALID_VALUE) a block past 1024 threads or 1024/1024/64, a
//     grid past 2^31-1/65535/65535, and static plus dynamic shared memory past 48 KiB unless the
//     kernel was opted in to that much (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), or past the
//     device's opt-in limit;
//   - launches are asynchronous: a kernel's fault is not the launch's result but the next
//     synchronisation's, and from then on every call returns it (the context is lost);
//   - an event pair reads CUDA_ERROR_INVALID_HANDLE until both were recorded.
// The harness's own kernels (the input generator and the output comparison) are its real CUDA, the
// text the GPU runner gives NVRTC, compiled for the CPU runtime and launched with the real driver's
// arguments and shapes (cuda_driver.cpp), so the whole harness runs here on trusted sources. Only the
// cache flush does nothing (there is no cache to evict), and there are no activity records (CUDA
// events time everything, as where CUPTI is unavailable).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "evaluation/gpu_driver.hpp"
#include "leap/cpu_runtime/launch.hpp"
#include "verify/module_cache.hpp"

namespace leap::sandbox::test {

class CpuRuntimeGpu final : public detail::GpuDriver {
 public:
  explicit CpuRuntimeGpu(verify::ModuleCache& cache,
                         cpu_runtime::Schedule schedule = cpu_runtime::Schedule::in_order());
  ~CpuRuntimeGpu() override;

  double peak_bandwidth = 0.0;         // what peak_memory_bandwidth() reports (0: the device does not say)
  unsigned shared_optin = 227 * 1024;  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
  int launches = 0;                    // kernels launched so far through launch()
  int harness_launches = 0;            // the harness's own kernels: input draws and comparisons
  int opt_ins = 0;                     // allow_dynamic_shared calls that succeeded
  int flushes = 0;
  std::string last_fault;  // the CPU runtime's account of the kernel fault, if any
  std::size_t live_allocations() const { return allocations_.size(); }
  std::size_t loaded_modules() const { return modules_.size(); }

  std::string error_name(detail::DeviceStatus status) const override;
  std::string error_text(detail::DeviceStatus status) const override;
  std::string device_name() const override { return "CPU runtime"; }
  bool reads_pageable_host_memory() const override { return false; }
  double peak_memory_bandwidth() const override { return peak_bandwidth; }
  unsigned max_shared_bytes_optin() const override { return shared_optin; }

  detail::DeviceStatus load_module(std::string_view image, detail::ModuleHandle& module) override;
  detail::DeviceStatus unload_module(detail::ModuleHandle module) override;
  detail::DeviceStatus get_function(detail::ModuleHandle module, const std::string& name,
                                    detail::FunctionHandle& function) override;
  detail::DeviceStatus param_info(detail::FunctionHandle, std::size_t, std::size_t&, std::size_t&) override;
  detail::DeviceStatus allow_dynamic_shared(detail::FunctionHandle function, unsigned bytes) override;
  detail::DeviceStatus local_bytes_per_thread(detail::FunctionHandle function, std::size_t& bytes) override;
  detail::DeviceStatus static_shared_bytes(detail::FunctionHandle function, unsigned& bytes) override;

  detail::DeviceStatus allocate(std::size_t bytes, detail::DevicePtr& ptr) override;
  detail::DeviceStatus release(detail::DevicePtr ptr) override;
  detail::DeviceStatus upload(detail::DevicePtr dst, const void* src, std::size_t bytes) override;
  detail::DeviceStatus download(void* dst, detail::DevicePtr src, std::size_t bytes) override;
  detail::DeviceStatus fill8(detail::DevicePtr dst, std::uint8_t value, std::size_t count) override;
  detail::DeviceStatus fill16(detail::DevicePtr dst, std::uint16_t value, std::size_t count) override;
  detail::DeviceStatus fill32(detail::DevicePtr dst, std::uint32_t value, std::size_t count) override;
  detail::DeviceStatus generate_inputs(detail::DevicePtr, DType, const Generator&, std::uint64_t, std::size_t) override;
  detail::DeviceStatus compare_on_device(detail::DevicePtr, detail::DevicePtr, DType, std::size_t, Tolerance, bool,
                                         detail::DevicePtr) override;
  detail::DeviceStatus flush_caches() override;

  detail::DeviceStatus launch(detail::FunctionHandle function, const detail::LaunchShape& shape, void** args,
                              std::size_t arg_count) override;
  detail::DeviceStatus synchronize() override;
  detail::DeviceStatus record_start() override;
  detail::DeviceStatus record_stop() override;
  detail::DeviceStatus elapsed_ms(double& ms) override;

  bool activity_enabled() const override { return false; }
  std::string activity_note() const override { return "no activity records on the CPU runtime"; }
  void activity_reset() override {}
  detail::DeviceStatus push_external_id(std::uint64_t) override { return sticky_; }
  detail::DeviceStatus pop_external_id() override { return sticky_; }
  std::uint64_t activity_timestamp_ns() override { return 0; }
  detail::ActivityHarvest harvest_activity(std::size_t) override { return {}; }

 private:
  struct Function {
    const cpu_runtime::Kernel* kernel = nullptr;
    unsigned opted_in_shared = 0;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  };
  struct LoadedModule {
    const cpu_runtime::Module* module = nullptr;
    std::map<std::string, Function> functions;
  };
  // The allocation holding [p, p + bytes), or nullptr.
  unsigned char* inside(detail::DevicePtr p, std::size_t bytes) const;
  template <class T>
  detail::DeviceStatus fill(detail::DevicePtr dst, T value, std::size_t count);
  // A kernel run as cuLaunchKernel runs it: asynchronously, a fault pending until the next synchronisation.
  detail::DeviceStatus run(const cpu_runtime::Kernel& kernel, const detail::LaunchShape& shape, void** args,
                           std::size_t arg_count);
  const cpu_runtime::Module& harness_module();

  verify::ModuleCache& cache_;
  cpu_runtime::Schedule schedule_;
  const cpu_runtime::Module* harness_ = nullptr;          // compiled at the first draw or comparison
  std::map<detail::DevicePtr, std::size_t> allocations_;  // start -> bytes
  std::map<LoadedModule*, std::unique_ptr<LoadedModule>> modules_;
  detail::DeviceStatus pending_ = 0;  // a kernel's fault, due at the next synchronisation
  detail::DeviceStatus sticky_ = 0;   // the lost context's error, returned by every call
  std::chrono::steady_clock::time_point start_, stop_;
  bool started_ = false, stopped_ = false;
};

}  // namespace leap::sandbox::test

// SPDX-License-Identifier: Apache-2.0
// The device operations the evaluation harness needs, and nothing more. Two implementations: the
// real one over the dlopen'ed CUDA driver and CUPTI (cuda_driver.cpp), and a CPU fake in the tests
// whose "kernels" are host functions, so the whole evaluation protocol is tested without a GPU.
// Internal.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox::detail {

// CUresult values (0 = success), so a fake can report exactly what the driver would.
using DeviceStatus = int;
constexpr DeviceStatus k_device_ok = 0;
constexpr DeviceStatus k_device_invalid_value = 1;    // CUDA_ERROR_INVALID_VALUE
constexpr DeviceStatus k_device_not_supported = 801;  // CUDA_ERROR_NOT_SUPPORTED
using DevicePtr = std::uint64_t;
using ModuleHandle = void*;
using FunctionHandle = void*;

struct LaunchShape {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
};

// One kernel execution as the activity API saw it; external_id is the id pushed around its launch
// (0 when the record carries none).
struct KernelActivity {
  std::uint64_t start_ns = 0, end_ns = 0;
  std::uint64_t external_id = 0;
};

// The CUPTI activity kinds the real driver enables (cuda_driver.cpp), and the rule that ties them:
// CUPTI writes an external correlation record only in front of a driver or runtime API record
// (cupti_activity.h, cuptiActivityPushExternalCorrelationId), with that API record's correlation id,
// which the kernel record of a launch carries too. Without API records no kernel record can be tied
// to the id pushed around its launch, and runs are matched by time window. The CPU fake starts from
// the same set, so its tests follow what the device does.
struct ActivityKinds {
  bool kernel = true;                // CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
  bool external_correlation = true;  // CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION
  bool driver_api = true;            // CUPTI_ACTIVITY_KIND_DRIVER: the launch's API record
  constexpr bool ids_attach() const { return kernel && external_correlation && driver_api; }
};
inline constexpr ActivityKinds k_enabled_activity_kinds{};

// One timed run as the harvest looks for it: its window on the activity clock, the external id
// pushed around its launches, and how many kernels its plan launched in it. Only these kernels are
// waited for and counted: the harness's own (input generator, cache flush, comparison) never are.
struct RunWindow {
  std::uint64_t t0 = 0, t1 = 0, external_id = 0;
  std::size_t kernels = 0;
};

// Whether a kernel record from an activity buffer can time anything. A forced flush
// (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) hands over buffers whose records may be incomplete
// (cupti_activity.h, cuptiActivityFlushAll): timestamps not yet written read 0 (start and end both 0:
// "timestamp information could not be collected"; CUPTI_TIMESTAMP_UNKNOWN is 0). Such a record is
// left out of the harvest, so a run whose record was incomplete is a run with a missing record.
constexpr bool kernel_record_usable(std::uint64_t start_ns, std::uint64_t end_ns) {
  return start_ns != 0 && end_ns > start_ns;
}

struct ActivityHarvest {
  std::vector<KernelActivity> kernels;
  std::size_t dropped = 0;  // records the activity API reports it lost
  std::string problem;      // non-empty when the harvest itself failed
};

class GpuDriver {
 public:
  virtual ~GpuDriver() = default;

  virtual std::string error_name(DeviceStatus status) const = 0;  // "CUDA_ERROR_ILLEGAL_ADDRESS"
  virtual std::string error_text(DeviceStatus status) const = 0;  // the driver's sentence, may be empty
  virtual std::string device_name() const = 0;
  // CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS: device code can read and write the runner's ordinary
  // host memory (its stack, the host copies of inputs and outputs). The runner refuses to evaluate
  // there unless the operator allowed it (GpuRunnerConfig::allow_pageable_host_access).
  virtual bool reads_pageable_host_memory() const = 0;
  // The device memory's peak bandwidth in bytes per second (memory clock x bus width x 2, from
  // CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE and _GLOBAL_MEMORY_BUS_WIDTH); 0 when the device does not
  // say. The physical floor under every timing (see timing_floor.hpp) divides by it.
  virtual double peak_memory_bandwidth() const = 0;
  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: the most dynamic shared memory a kernel
  // may ask for once allow_dynamic_shared opted it in (48 KiB without opting in).
  virtual unsigned max_shared_bytes_optin() const = 0;
  // The host's clock as the harness measures its deadline by. Time spent inside driver calls (and
  // waiting for the device) is on it; the CPU fake, whose kernels take no host time, adds theirs.
  virtual std::chrono::steady_clock::time_point host_now() const { return std::chrono::steady_clock::now(); }

  virtual DeviceStatus load_module(std::string_view image, ModuleHandle& module) = 0;
  virtual DeviceStatus unload_module(ModuleHandle module) = 0;
  virtual DeviceStatus get_function(ModuleHandle module, const std::string& name, FunctionHandle& function) = 0;
  // cuFuncGetParamInfo (CUDA 12.4+): parameter `index` of `function`, its offset in the parameter
  // block and its bytes; k_device_invalid_value past the last parameter, k_device_not_supported
  // where the driver lacks the call.
  virtual DeviceStatus param_info(FunctionHandle function, std::size_t index, std::size_t& offset,
                                  std::size_t& size) = 0;
  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: lets `function` launch with more than 48 KiB.
  virtual DeviceStatus allow_dynamic_shared(FunctionHandle function, unsigned bytes) = 0;
  // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: the kernel's local memory per thread (its stack frame and
  // spills). The driver grows the context's local-memory reservation to fit and never shrinks it.
  virtual DeviceStatus local_bytes_per_thread(FunctionHandle function, std::size_t& bytes) = 0;
  // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: the kernel's static shared memory; with the dynamic it must
  // fit max_shared_bytes_optin(), and above 48 KiB together the kernel must be opted in.
  virtual DeviceStatus static_shared_bytes(FunctionHandle function, unsigned& bytes) = 0;

  virtual DeviceStatus allocate(std::size_t bytes, DevicePtr& ptr) = 0;
  virtual DeviceStatus release(DevicePtr ptr) = 0;
  virtual DeviceStatus upload(DevicePtr dst, const void* src, std::size_t bytes) = 0;
  virtual DeviceStatus download(void* dst, DevicePtr src, std::size_t bytes) = 0;
  virtual DeviceStatus fill8(DevicePtr dst, std::uint8_t value, std::size_t count) = 0;
  virtual DeviceStatus fill16(DevicePtr dst, std::uint16_t value, std::size_t count) = 0;
  virtual DeviceStatus fill32(DevicePtr dst, std::uint32_t value, std::size_t count) = 0;
  // n elements drawn on the device by the harness's own kernel (see input_generator.hpp), so the
  // values exist nowhere a candidate could have seen them before its run.
  virtual DeviceStatus generate_inputs(DevicePtr dst, DType dtype, const Generator& generator, std::uint64_t seed,
                                       std::size_t n) = 0;
  // Compares n elements of `actual` with `expected` by the harness's own kernel (device_compare.hpp),
  // adding to the CompareRecord at `record` (two 64-bit words of device memory) the elements that
  // differ and lowering its first index to the first of them. exact: the bits must be equal.
  virtual DeviceStatus compare_on_device(DevicePtr actual, DevicePtr expected, DType dtype, std::size_t n,
                                         Tolerance tol, bool exact, DevicePtr record) = 0;
  // Evicts the caches between timed runs; no persisting L2 lines survive it.
  virtual DeviceStatus flush_caches() = 0;

  // args: one pointer per kernel parameter (arg_count of them), to its value, as cuLaunchKernel
  // takes them.
  virtual DeviceStatus launch(FunctionHandle function, const LaunchShape& shape, void** args,
                              std::size_t arg_count) = 0;
  virtual DeviceStatus synchronize() = 0;

  // Two events around a timed launch; elapsed is stop - start in milliseconds.
  virtual DeviceStatus record_start() = 0;
  virtual DeviceStatus record_stop() = 0;
  virtual DeviceStatus elapsed_ms(double& ms) = 0;

  // Kernel activity (CUPTI): every kernel the device ran, with the external id pushed around its
  // launch. activity_enabled() false: events only, and activity_note() says why.
  virtual bool activity_enabled() const = 0;
  virtual std::string activity_note() const = 0;
  virtual void activity_reset() = 0;  // forget every record so far (once per evaluation)
  virtual DeviceStatus push_external_id(std::uint64_t id) = 0;
  virtual DeviceStatus pop_external_id() = 0;
  virtual std::uint64_t activity_timestamp_ns() = 0;  // the activity records' clock
  // Delivers the records collected since activity_reset() or the last harvest; waits for up to
  // `expected` kernels.
  virtual ActivityHarvest harvest_activity(std::size_t expected) = 0;
  // The same, waiting until the records of these runs' plan kernels are in (activity_match.hpp
  // says which record belongs to which run), never counting the harness's own kernels. A driver
  // whose records all arrive at once may keep the default.
  virtual ActivityHarvest harvest_runs(const std::vector<RunWindow>& runs) {
    std::size_t kernels = 0;
    for (const RunWindow& r : runs) kernels += r.kernels;
    return harvest_activity(kernels);
  }
};

}  // namespace leap::sandbox::detail

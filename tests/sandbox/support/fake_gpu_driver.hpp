// SPDX-License-Identifier: Apache-2.0
// A GpuDriver on the CPU. Device memory is one host arena (addresses are real offsets, so a kernel
// that writes past its buffer hits the guard or a neighbour, as on a GPU); "kernels" are host
// functions registered per module image, each with its module's own __device__ state (gone when
// the module is reloaded); a virtual device clock advances by the durations the kernels report,
// and both the events and the activity records read it. It follows the driver's rules (faults
// reported late, a poisoned context, event gaps and jitter, late activity buffers, varying
// durations, host time) as FakeRules says; FakeRules::idealised() turns them off. Every operation
// is logged, so tests can check the order of the harness's steps.
#pragma once

#include <cstdint>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "evaluation/gpu_driver.hpp"
#include "fake_rules.hpp"
#include "leap/sandbox/launch_plan.hpp"

namespace leap::sandbox::test {

using detail::DevicePtr;
using detail::DeviceStatus;

constexpr DeviceStatus k_illegal_address = 700;  // CUDA_ERROR_ILLEGAL_ADDRESS
constexpr DeviceStatus k_launch_failed = 719;    // CUDA_ERROR_LAUNCH_FAILED

class FakeGpu;

// What an emulated kernel sees and reports.
struct FakeCall {
  FakeGpu& gpu;
  std::vector<std::uint64_t> args;  // the raw 8-byte argument slots
  detail::LaunchShape shape;
  std::map<std::string, std::uint64_t>& globals;  // the module's __device__ variables
  std::uint64_t now_ns = 0;                       // %globaltimer at the launch
  double duration_ms = 0.0;                       // set by the kernel: how long it "ran"
  DeviceStatus status = 0;                        // set by the kernel: e.g. k_illegal_address

  DevicePtr pointer(std::size_t arg) const { return args.at(arg); }
  float f32(std::size_t arg) const {
    float v = 0.0f;
    std::memcpy(&v, &args.at(arg), sizeof v);
    return v;
  }
  std::int32_t i32(std::size_t arg) const {
    std::int32_t v = 0;
    std::memcpy(&v, &args.at(arg), sizeof v);
    return v;
  }
  // `count` floats at device address p, or nullptr (and status = illegal address) outside memory.
  float* floats(DevicePtr p, std::size_t count);
};
using FakeKernel = std::function<void(FakeCall&)>;

struct FakeOp {
  FakeOp(std::string what_, std::string name_ = {}, DevicePtr ptr_ = 0, std::size_t bytes_ = 0, std::uint64_t seed_ = 0)
      : what(std::move(what_)), name(std::move(name_)), ptr(ptr_), bytes(bytes_), seed(seed_) {}
  std::string what;  // "stage", "load", "unload", "alloc", "free", "upload", "download", "fill", "generate",
                     // "compare", "flush", "launch", "allow_shared", "record_start", "record_stop", "sync"
  std::string name;  // stage name, module image, "image:kernel" of a launch
  DevicePtr ptr = 0;
  std::size_t bytes = 0;
  std::uint64_t seed = 0;           // generate: the seed; fill: the value; compare: the expected buffer
  std::vector<std::uint64_t> args;  // launch: the argument slots
};

class FakeGpu final : public detail::GpuDriver {
 public:
  explicit FakeGpu(FakeRules rules = {}, std::size_t arena_bytes = std::size_t{32} << 20);
  const FakeRules& rules() const { return rules_; }

  // Registers a module image ("fake:honest") with its kernels by name, and the parameters of those
  // kernels that have them registered (what cuFuncGetParamInfo reports; a kernel without any acts
  // as on a driver before CUDA 12.4, which cannot tell).
  void add_module(const std::string& image, std::map<std::string, FakeKernel> kernels, KernelParams params = {});
  void set_params(const std::string& image, const std::string& kernel, std::vector<KernelParam> params);
  bool has_params(const std::string& image, const std::string& kernel) const;
  // The parameters of a kernel declared with the task's signature: a pointer per buffer, 4 bytes
  // per scalar, each at its natural alignment.
  static std::vector<KernelParam> signature_params(const TaskSpec& task);

  std::vector<FakeOp> log;
  // Knobs.
  bool activity_on = true;  // false: as if CUPTI were off
  // The CUPTI kinds enabled, as the real driver enables them (detail::k_enabled_activity_kinds). As
  // with CUPTI, a kernel record carries the id pushed around its launch only when both the external
  // correlation kind and the driver API kind are on; otherwise runs are matched by time window.
  bool external_ids = detail::k_enabled_activity_kinds.external_correlation;
  bool driver_api_records = detail::k_enabled_activity_kinds.driver_api;
  std::size_t drop_every = 0;  // > 0: every n-th kernel record is lost (and counted as dropped)
  std::string undelivered;     // a kernel whose records never arrive, uncounted
  std::string incomplete;      // a kernel whose records arrive incomplete (timestamps unknown)
  // Applied to every device draw after the host twin made it (bytes, count): a device generator
  // that disagrees with its host twin.
  std::function<void(unsigned char*, std::size_t)> generator_fault;
  double generator_ms = 0.001;                     // the input generator's own emulated time
  unsigned shared_optin = 227 * 1024;              // the device's opt-in limit of shared memory per block
  double peak_bandwidth = 1e12;                    // bytes per second the device reports (0: it does not say)
  double compare_ms = 0.001;                       // the comparison kernel's own emulated time
  std::map<std::string, unsigned> static_shared;   // kernel name -> its static shared memory (default 0)
  std::map<std::string, std::size_t> local_bytes;  // kernel name -> its local memory per thread (default 0)
  bool pageable_host_access = false;               // CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS

  // Facts for assertions.
  // Launches of a kernel with registered parameters that passed fewer argument pointers than it
  // declares, or a parameter wider than the harness's 8-byte slots: the driver would have read
  // past what the harness passed (the fake reads zeros instead).
  int argument_overreads = 0;
  int unscrubbed_frees = 0;  // buffers freed while still holding non-zero bytes
  std::size_t live_allocations() const { return allocations_.size(); }
  const std::map<DevicePtr, std::size_t>& allocations() const { return allocations_; }  // start -> bytes
  std::uint64_t clock_ns() const { return now_ns_; }
  std::chrono::nanoseconds host_time_charged() const { return std::chrono::nanoseconds(host_charged_ns_); }
  int kernels_skipped = 0;  // launches accepted after a fault, which never ran (rule a)
  int activity_pieces = 0;  // activity buffers handed over so far (rule d)
  int forced_flushes = 0;
  unsigned char* memory(DevicePtr p, std::size_t bytes);  // nullptr outside the arena

  // GpuDriver
  std::string error_name(DeviceStatus status) const override;
  std::string error_text(DeviceStatus status) const override;
  std::string device_name() const override { return "fake GPU"; }
  bool reads_pageable_host_memory() const override { return pageable_host_access; }
  unsigned max_shared_bytes_optin() const override { return shared_optin; }
  double peak_memory_bandwidth() const override { return peak_bandwidth; }
  std::chrono::steady_clock::time_point host_now() const override {
    return std::chrono::steady_clock::now() + std::chrono::nanoseconds(host_charged_ns_);
  }
  DeviceStatus load_module(std::string_view image, detail::ModuleHandle& module) override;
  DeviceStatus unload_module(detail::ModuleHandle module) override;
  DeviceStatus get_function(detail::ModuleHandle module, const std::string& name,
                            detail::FunctionHandle& function) override;
  // As cuFuncGetParamInfo: CUDA_ERROR_INVALID_VALUE past the last parameter; CUDA_ERROR_NOT_SUPPORTED
  // for a kernel registered without parameters (an older driver).
  DeviceStatus param_info(detail::FunctionHandle function, std::size_t index, std::size_t& offset,
                          std::size_t& size) override;
  // As the driver: static and dynamic together above the device's opt-in limit are an invalid
  // value; a launch with more dynamic shared memory than allowed (48 KiB less the static by
  // default) fails.
  DeviceStatus allow_dynamic_shared(detail::FunctionHandle function, unsigned bytes) override;
  DeviceStatus static_shared_bytes(detail::FunctionHandle function, unsigned& bytes) override;
  DeviceStatus local_bytes_per_thread(detail::FunctionHandle function, std::size_t& bytes) override;
  DeviceStatus allocate(std::size_t bytes, DevicePtr& ptr) override;
  DeviceStatus release(DevicePtr ptr) override;
  DeviceStatus upload(DevicePtr dst, const void* src, std::size_t bytes) override;
  DeviceStatus download(void* dst, DevicePtr src, std::size_t bytes) override;
  DeviceStatus fill8(DevicePtr dst, std::uint8_t value, std::size_t count) override;
  DeviceStatus fill16(DevicePtr dst, std::uint16_t value, std::size_t count) override;
  DeviceStatus fill32(DevicePtr dst, std::uint32_t value, std::size_t count) override;
  DeviceStatus generate_inputs(DevicePtr dst, DType dtype, const Generator& generator, std::uint64_t seed,
                               std::size_t n) override;
  DeviceStatus compare_on_device(DevicePtr actual, DevicePtr expected, DType dtype, std::size_t n, Tolerance tol,
                                 bool exact, DevicePtr record) override;
  DeviceStatus flush_caches() override;
  DeviceStatus launch(detail::FunctionHandle function, const detail::LaunchShape& shape, void** args,
                      std::size_t arg_count) override;
  DeviceStatus synchronize() override;
  DeviceStatus record_start() override;
  DeviceStatus record_stop() override;
  DeviceStatus elapsed_ms(double& ms) override;
  bool activity_enabled() const override { return activity_on; }
  std::string activity_note() const override { return activity_on ? "" : "activity off in the fake"; }
  void activity_reset() override;
  DeviceStatus push_external_id(std::uint64_t id) override;
  DeviceStatus pop_external_id() override;
  std::uint64_t activity_timestamp_ns() override { return now_ns_; }
  detail::ActivityHarvest harvest_activity(std::size_t expected) override;

 private:
  struct Module {
    std::string image;
    std::map<std::string, std::uint64_t> globals;
  };
  struct Function {
    Module* module;
    std::string name;
    FakeKernel kernel;
    std::optional<std::vector<KernelParam>> params;
    unsigned static_shared = 0;
    unsigned shared_allowed = 48 * 1024;
  };
  // One kernel record as CUPTI writes it into an activity buffer.
  struct RawRecord {
    std::uint64_t start = 0, end = 0, completed = 0, external_id = 0;
  };
  struct ActivityBuffer {
    std::vector<RawRecord> records;
    int flushes_left = 0;  // unforced flushes before it is handed over
  };
  enum class Gate { run, skip };  // an asynchronous call's work: done, or accepted but never run

  double kernel_ms(double ms);  // rule e: variance and the L2
  void record_kernel(double ms, std::uint64_t external_id, bool delivered = true, bool complete = true);
  void charge_call();                   // rule f
  DeviceStatus async_call(Gate& gate);  // rules a, b: may report a pending fault
  DeviceStatus sync_call();             // rules a, b, f: reports any fault, waits for the device
  void fault(DeviceStatus status);
  void write_record(const RawRecord& r);
  void flush_activity(bool forced);
  bool activity_matched(std::size_t expected) const;
  double event_ms(std::uint64_t ns);  // rule c

  std::vector<unsigned char> arena_;
  DevicePtr base_ = 0x10000000;
  std::map<DevicePtr, std::size_t> allocations_;  // start -> bytes
  std::map<std::string, std::map<std::string, FakeKernel>> registry_;
  std::map<std::string, KernelParams> params_;  // by image
  std::vector<std::unique_ptr<Module>> modules_;
  std::vector<std::unique_ptr<Function>> functions_;
  std::uint64_t now_ns_ = 1'000'000'000;
  std::uint64_t start_ns_ = 0, stop_ns_ = 0;
  FakeRules rules_;
  std::mt19937_64 random_;
  DeviceStatus sticky_ = 0;  // a kernel's error poisons the context, as on a GPU
  DeviceStatus pending_fault_ = 0;
  int pending_calls_ = 0;  // asynchronous calls that still return success before the fault surfaces
  std::int64_t host_charged_ns_ = 0;
  std::uint64_t device_pending_ns_ = 0;  // device time queued since the host last waited
  bool l2_warm_ = false;
  std::vector<std::uint64_t> external_stack_;
  ActivityBuffer open_buffer_;
  std::deque<ActivityBuffer> full_buffers_;
  std::vector<RawRecord> delivered_;
  std::size_t record_count_ = 0, dropped_ = 0;
};

}  // namespace leap::sandbox::test

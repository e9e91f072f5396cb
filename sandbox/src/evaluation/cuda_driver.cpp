// SPDX-License-Identifier: Apache-2.0
#include "evaluation/cuda_driver.hpp"

#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "evaluation/activity_match.hpp"
#include "evaluation/device_compare.hpp"
#include "evaluation/input_generator.hpp"
#include "evaluation/l2_flush.hpp"
#include "evaluation/timer_choice.hpp"

namespace leap::sandbox::detail {
namespace {

// The symbol names come from cuda.h's own macros (cuMemAlloc -> cuMemAlloc_v2, ...), so the ABI
// version we call is the one the declarations describe.
#define LEAP_STR2(x) #x
#define LEAP_STR(x) LEAP_STR2(x)
// One function per line: clang-format 14 packs an X-macro list unevenly.
// clang-format off
#define LEAP_CU_FUNCS(X) \
  X(cuInit) \
  X(cuDeviceGet) \
  X(cuDeviceGetName) \
  X(cuDeviceGetAttribute) \
  X(cuDevicePrimaryCtxRetain) \
  X(cuCtxSetCurrent) \
  X(cuCtxSynchronize) \
  X(cuCtxSetLimit) \
  X(cuModuleLoadData) \
  X(cuModuleUnload) \
  X(cuModuleGetFunction) \
  X(cuFuncSetAttribute) \
  X(cuFuncGetAttribute) \
  X(cuLaunchKernel) \
  X(cuMemAlloc) \
  X(cuMemFree) \
  X(cuMemcpyHtoD) \
  X(cuMemcpyDtoH) \
  X(cuMemsetD8) \
  X(cuMemsetD16) \
  X(cuMemsetD32) \
  X(cuEventCreate) \
  X(cuEventRecord) \
  X(cuEventDestroy) \
  X(cuGetErrorName)
// clang-format on
#define LEAP_CU_OPTIONAL(X) X(cuCtxResetPersistingL2Cache) X(cuGetErrorString) X(cuFuncGetParamInfo)

struct Symbols {
#define LEAP_DECLARE(F) decltype(&::F) F = nullptr;
  LEAP_CU_FUNCS(LEAP_DECLARE)
  LEAP_CU_OPTIONAL(LEAP_DECLARE)
#undef LEAP_DECLARE
  CUresult (*event_elapsed)(float*, CUevent, CUevent) = nullptr;

  std::string load(const std::string& path) {
    void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) {
      const char* e = ::dlerror();
      return "cannot load " + path + ": " + (e != nullptr ? e : "unknown error");
    }
#define LEAP_LOAD(F)                                            \
  F = reinterpret_cast<decltype(F)>(::dlsym(lib, LEAP_STR(F))); \
  if (F == nullptr) return path + " lacks " LEAP_STR(F);
    LEAP_CU_FUNCS(LEAP_LOAD)
#undef LEAP_LOAD
#define LEAP_LOAD_OPT(F) F = reinterpret_cast<decltype(F)>(::dlsym(lib, LEAP_STR(F)));
    LEAP_CU_OPTIONAL(LEAP_LOAD_OPT)
#undef LEAP_LOAD_OPT
    // cuda.h 13 maps cuEventElapsedTime to _v2 (driver 12.8+); older drivers have the plain one.
    event_elapsed = reinterpret_cast<decltype(event_elapsed)>(::dlsym(lib, LEAP_STR(cuEventElapsedTime)));
    if (event_elapsed == nullptr)
      event_elapsed = reinterpret_cast<decltype(event_elapsed)>(::dlsym(lib, "cuEventElapsedTime"));
    if (event_elapsed == nullptr) return path + " lacks cuEventElapsedTime";
    return {};
  }
};

// ---- CUPTI activity: raw records, resolved at harvest time -------------------------------------------
struct RawKernel {
  std::uint64_t start, end;
  std::uint32_t correlation;
};
std::mutex g_activity_mutex;
std::vector<RawKernel> g_kernels;
// The external correlation record that precedes a launch's driver API record carries that API
// record's correlation id, which is also the kernel record's: the map ties kernel records to the ids
// pushed around their launches. Without driver API records CUPTI writes none of these.
std::map<std::uint32_t, std::uint64_t> g_external;  // CUPTI correlation id -> our external id
std::size_t g_dropped = 0;
constexpr std::size_t k_cupti_buffer = 4u << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, k_cupti_buffer));
  *size = *buffer != nullptr ? k_cupti_buffer : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard lock(g_activity_mutex);
  CUpti_Activity* rec = nullptr;
  while (buffer != nullptr && valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      if (kernel_record_usable(k->start, k->end)) g_kernels.push_back({k->start, k->end, k->correlationId});
    } else if (rec->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
      const auto* e = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(rec);
      if (e->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) g_external[e->correlationId] = e->externalId;
    }
    // CUPTI_ACTIVITY_KIND_DRIVER records are enabled only so that CUPTI writes the external
    // correlation records in front of them; their correlation id is already in the map above.
  }
  std::size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) g_dropped += dropped;
  std::free(buffer);
}

std::string cupti_error(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s != nullptr ? s : "CUPTI error " + std::to_string(static_cast<int>(r));
}

constexpr unsigned k_printf_fifo_bytes = 1u << 20;  // a printf flood costs at most this per sync

class CudaDriver final : public GpuDriver {
 public:
  std::string open(const GpuRunnerConfig& config) {
    if (std::string e = cu_.load(config.driver_library); !e.empty()) return e;
    const TimerChoice timer = timer_choice();
    if (timer.method == "events") {
      activity_note_ = timer.reason;
    } else if (CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS) {
      activity_note_ = "CUPTI unavailable (cuptiActivityRegisterCallbacks: " + cupti_error(r) + "); CUDA events only";
    } else if (CUptiResult r2 = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); r2 != CUPTI_SUCCESS) {
      activity_note_ =
          "CUPTI unavailable (cuptiActivityEnable(CONCURRENT_KERNEL): " + cupti_error(r2) + "); CUDA events only";
    } else {
      activity_ = true;  // enabled before the context exists, so every kernel of it is recorded
      static_assert(k_enabled_activity_kinds.ids_attach(), "the fake's default kinds must be the ones enabled here");
      // External ids need both kinds: the correlation records come only in front of API records.
      if (CUptiResult r3 = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER); r3 != CUPTI_SUCCESS) {
        activity_note_ =
            "CUPTI driver API records unavailable (" + cupti_error(r3) + "); kernels matched by time window";
      } else if (CUptiResult r4 = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION); r4 != CUPTI_SUCCESS) {
        cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER);  // of no use without the correlation records
        activity_note_ =
            "CUPTI external correlation unavailable (" + cupti_error(r4) + "); kernels matched by time window";
      } else {
        external_ids_ = true;
      }
    }
#define LEAP_OPEN(call) \
  if (CUresult rc_ = (call); rc_ != CUDA_SUCCESS) return std::string(#call " failed: ") + error_name(rc_);
    LEAP_OPEN(cu_.cuInit(0));
    LEAP_OPEN(cu_.cuDeviceGet(&dev_, config.device));
    char name[256] = {};
    LEAP_OPEN(cu_.cuDeviceGetName(name, static_cast<int>(sizeof name) - 1, dev_));
    name_ = name;
    LEAP_OPEN(cu_.cuDevicePrimaryCtxRetain(&ctx_, dev_));
    LEAP_OPEN(cu_.cuCtxSetCurrent(ctx_));
    int pageable = 0, l2 = 0, major = 0, minor = 0, sms = 0;
    LEAP_OPEN(cu_.cuDeviceGetAttribute(&pageable, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, dev_));
    LEAP_OPEN(cu_.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev_));
    LEAP_OPEN(cu_.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev_));
    sm_count_ = static_cast<unsigned>(std::max(sms, 1));
    int shared_optin = 0;
    LEAP_OPEN(cu_.cuDeviceGetAttribute(&shared_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev_));
    shared_optin_ = static_cast<unsigned>(std::max(shared_optin, 48 * 1024));
    LEAP_OPEN(cu_.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_));
    LEAP_OPEN(cu_.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_));
    pageable_ = pageable != 0;
    int memory_khz = 0, bus_bits = 0;  // zero where the device does not say: no floor then
    LEAP_OPEN(cu_.cuDeviceGetAttribute(&memory_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev_));
    LEAP_OPEN(cu_.cuDeviceGetAttribute(&bus_bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev_));
    peak_bandwidth_ = 2.0 * 1e3 * memory_khz * (bus_bits / 8.0);  // double data rate
    // No persisting L2 carve-out (every timed run starts from the same flushed cache); a bounded
    // printf FIFO (a flood costs a bounded copy per synchronisation, the rest is dropped).
    // Devices without persisting L2 (before Ampere) refuse the limit: nothing persists there anyway.
    if (CUresult rc = cu_.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0);
        rc != CUDA_SUCCESS && rc != CUDA_ERROR_UNSUPPORTED_LIMIT) {
      return "cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0) failed: " + error_name(rc);
    }
    LEAP_OPEN(cu_.cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, k_printf_fifo_bytes));
    scratch_bytes_ = std::max<std::size_t>(static_cast<std::size_t>(l2) * 2, std::size_t{64} << 20);
    LEAP_OPEN(cu_.cuMemAlloc(&scratch_, scratch_bytes_));
    LEAP_OPEN(cu_.cuEventCreate(&ev0_, CU_EVENT_DEFAULT));
    LEAP_OPEN(cu_.cuEventCreate(&ev1_, CU_EVENT_DEFAULT));
#undef LEAP_OPEN
    if (std::string e = load_generator(major, minor); !e.empty()) return e;
    flush_ = l2_flush_choice();
    return flush_ == L2Flush::clean ? load_l2_reader(major, minor) : std::string();
  }

  std::string error_name(DeviceStatus status) const override {
    const char* s = nullptr;
    if (cu_.cuGetErrorName != nullptr && cu_.cuGetErrorName(static_cast<CUresult>(status), &s) == CUDA_SUCCESS &&
        s != nullptr)
      return s;
    return "CUDA error " + std::to_string(status);
  }
  std::string error_text(DeviceStatus status) const override {
    const char* s = nullptr;
    if (cu_.cuGetErrorString != nullptr && cu_.cuGetErrorString(static_cast<CUresult>(status), &s) == CUDA_SUCCESS &&
        s != nullptr)
      return s;
    return {};
  }
  std::string device_name() const override { return name_; }
  bool reads_pageable_host_memory() const override { return pageable_; }
  unsigned max_shared_bytes_optin() const override { return shared_optin_; }
  double peak_memory_bandwidth() const override { return peak_bandwidth_; }

  DeviceStatus load_module(std::string_view image, ModuleHandle& module) override {
    CUmodule m = nullptr;
    const CUresult rc = cu_.cuModuleLoadData(&m, image.data());
    module = m;
    return rc;
  }
  DeviceStatus unload_module(ModuleHandle module) override { return cu_.cuModuleUnload(static_cast<CUmodule>(module)); }
  DeviceStatus get_function(ModuleHandle module, const std::string& name, FunctionHandle& function) override {
    CUfunction f = nullptr;
    const CUresult rc = cu_.cuModuleGetFunction(&f, static_cast<CUmodule>(module), name.c_str());
    function = f;
    return rc;
  }
  DeviceStatus param_info(FunctionHandle function, std::size_t index, std::size_t& offset, std::size_t& size) override {
    if (cu_.cuFuncGetParamInfo == nullptr) return CUDA_ERROR_NOT_SUPPORTED;  // a driver before 12.4
    return cu_.cuFuncGetParamInfo(static_cast<CUfunction>(function), index, &offset, &size);
  }
  DeviceStatus allow_dynamic_shared(FunctionHandle function, unsigned bytes) override {
    return cu_.cuFuncSetAttribute(static_cast<CUfunction>(function), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  static_cast<int>(bytes));
  }

  DeviceStatus local_bytes_per_thread(FunctionHandle function, std::size_t& bytes) override {
    int v = 0;
    const CUresult rc =
        cu_.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, static_cast<CUfunction>(function));
    bytes = static_cast<std::size_t>(std::max(v, 0));
    return rc;
  }

  DeviceStatus static_shared_bytes(FunctionHandle function, unsigned& bytes) override {
    int v = 0;
    const CUresult rc =
        cu_.cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, static_cast<CUfunction>(function));
    bytes = static_cast<unsigned>(std::max(v, 0));
    return rc;
  }

  DeviceStatus allocate(std::size_t bytes, DevicePtr& ptr) override {
    CUdeviceptr p = 0;
    const CUresult rc = cu_.cuMemAlloc(&p, bytes);
    ptr = p;
    return rc;
  }
  DeviceStatus release(DevicePtr ptr) override { return cu_.cuMemFree(ptr); }
  DeviceStatus upload(DevicePtr dst, const void* src, std::size_t bytes) override {
    return cu_.cuMemcpyHtoD(dst, src, bytes);
  }
  DeviceStatus download(void* dst, DevicePtr src, std::size_t bytes) override {
    return cu_.cuMemcpyDtoH(dst, src, bytes);
  }
  DeviceStatus fill8(DevicePtr dst, std::uint8_t value, std::size_t count) override {
    return cu_.cuMemsetD8(dst, value, count);
  }
  DeviceStatus fill16(DevicePtr dst, std::uint16_t value, std::size_t count) override {
    return cu_.cuMemsetD16(dst, value, count);
  }
  DeviceStatus fill32(DevicePtr dst, std::uint32_t value, std::size_t count) override {
    return cu_.cuMemsetD32(dst, value, count);
  }

  DeviceStatus generate_inputs(DevicePtr dst, DType dtype, const Generator& generator, std::uint64_t seed,
                               std::size_t n) override {
    if (n == 0) return CUDA_SUCCESS;
    GeneratorArgs g = generator_args(dtype, generator, seed);
    CUdeviceptr out = dst;
    unsigned long long count = n, seed_arg = seed;
    void* args[] = {&out, &count, &g.dtype, &g.kind, &g.a, &g.b, &g.lo, &g.span, &seed_arg};
    return cu_.cuLaunchKernel(generator_, generator_blocks(n), 1, 1, k_generator_threads, 1, 1, 0, nullptr, args,
                              nullptr);
  }

  DeviceStatus compare_on_device(DevicePtr actual, DevicePtr expected, DType dtype, std::size_t n, Tolerance tol,
                                 bool exact, DevicePtr record) override {
    if (n == 0) return CUDA_SUCCESS;
    static_assert(sizeof(CUdeviceptr) == sizeof(std::uint64_t), "device pointers travel as 64-bit values");
    CompareArgs c = compare_args(actual, expected, dtype, n, tol, exact, record);
    void* args[] = {&c.actual, &c.expected, &c.count, &c.dtype, &c.exact, &c.atol, &c.rtol, &c.record};
    return cu_.cuLaunchKernel(compare_, compare_blocks(n), 1, 1, k_compare_threads, 1, 1, 0, nullptr, args, nullptr);
  }

  DeviceStatus flush_caches() override {
    if (CUresult rc = cu_.cuMemsetD32(scratch_, ++flushes_, scratch_bytes_ / 4); rc != CUDA_SUCCESS) return rc;
    if (flush_ == L2Flush::clean) {  // a read of all of it: the dirty lines go now, clean ones stay
      CUdeviceptr buf = scratch_;
      unsigned long long words = scratch_bytes_ / 16;
      unsigned never = 0xFFFFFFFFu;  // the memset's value is a small count, never this
      CUdeviceptr sink = scratch_;
      void* args[] = {&buf, &words, &never, &sink};
      if (CUresult rc = cu_.cuLaunchKernel(l2_reader_, 4 * sm_count_, 1, 1, 512, 1, 1, 0, nullptr, args, nullptr);
          rc != CUDA_SUCCESS) {
        return rc;
      }
    }
    if (cu_.cuCtxResetPersistingL2Cache == nullptr) return CUDA_SUCCESS;
    const CUresult rc = cu_.cuCtxResetPersistingL2Cache();
    return rc == CUDA_ERROR_NOT_SUPPORTED || rc == CUDA_ERROR_UNSUPPORTED_LIMIT ? CUDA_SUCCESS : rc;
  }

  DeviceStatus launch(FunctionHandle function, const LaunchShape& s, void** args, std::size_t) override {
    return cu_.cuLaunchKernel(static_cast<CUfunction>(function), s.grid[0], s.grid[1], s.grid[2], s.block[0],
                              s.block[1], s.block[2], s.shared_bytes, nullptr, args, nullptr);
  }
  DeviceStatus synchronize() override { return cu_.cuCtxSynchronize(); }

  DeviceStatus record_start() override { return cu_.cuEventRecord(ev0_, nullptr); }
  DeviceStatus record_stop() override { return cu_.cuEventRecord(ev1_, nullptr); }
  DeviceStatus elapsed_ms(double& ms) override {
    float f = 0.0f;
    const CUresult rc = cu_.event_elapsed(&f, ev0_, ev1_);
    ms = f;
    return rc;
  }

  bool activity_enabled() const override { return activity_; }
  std::string activity_note() const override { return activity_note_; }
  void activity_reset() override {
    if (!activity_) return;
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);  // whatever was pending belongs to earlier work
    std::lock_guard lock(g_activity_mutex);
    g_kernels.clear();
    g_external.clear();
    g_dropped = 0;
  }
  DeviceStatus push_external_id(std::uint64_t id) override {
    if (!activity_ || !external_ids_) return CUDA_SUCCESS;
    return cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id) == CUPTI_SUCCESS
               ? CUDA_SUCCESS
               : CUDA_ERROR_UNKNOWN;
  }
  DeviceStatus pop_external_id() override {
    if (!activity_ || !external_ids_) return CUDA_SUCCESS;
    std::uint64_t last = 0;
    return cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last) == CUPTI_SUCCESS
               ? CUDA_SUCCESS
               : CUDA_ERROR_UNKNOWN;
  }
  std::uint64_t activity_timestamp_ns() override {
    std::uint64_t t = 0;
    if (activity_) cuptiGetTimestamp(&t);
    return t;
  }

  ActivityHarvest harvest_activity(std::size_t expected) override {
    return harvest_until([&](const std::vector<KernelActivity>& records) {
      if (!external_ids_) return records.size() >= expected;
      return static_cast<std::size_t>(std::count_if(records.begin(), records.end(), [](const KernelActivity& k) {
               return k.external_id != 0;
             })) >= expected;
    });
  }
  // Complete once every plan kernel of the runs has its record: the harness's own kernels (input
  // generator, flush, comparison) are recorded too, and counting them would end the wait early.
  ActivityHarvest harvest_runs(const std::vector<RunWindow>& runs) override {
    std::size_t kernels = 0;
    for (const RunWindow& r : runs) kernels += r.kernels;
    return harvest_until(
        [&](const std::vector<KernelActivity>& records) { return plan_records_delivered(records, runs) >= kernels; });
  }

 private:
  template <class Complete>
  ActivityHarvest harvest_until(const Complete& complete) {
    ActivityHarvest h;
    if (!activity_) return h;
    // Unforced flushes deliver only completed buffers: poll briefly, and force only at the end (a
    // forced flush may hand over records still being written, which are then incomplete).
    for (int i = 0; i < 20; ++i) {
      if (CUptiResult r = cuptiActivityFlushAll(0); r != CUPTI_SUCCESS) {
        h.problem = "cuptiActivityFlushAll: " + cupti_error(r);
        break;
      }
      if (complete(resolved_records())) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (!complete(resolved_records())) {
      if (CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
          r != CUPTI_SUCCESS && h.problem.empty()) {
        h.problem = "cuptiActivityFlushAll(FORCED): " + cupti_error(r);
      }
    }
    std::lock_guard lock(g_activity_mutex);
    h.kernels = resolved_records_locked();
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) g_dropped += dropped;
    h.dropped = g_dropped;
    g_kernels.clear();
    g_external.clear();
    g_dropped = 0;
    return h;
  }

  // The kernel records so far, each with the external id pushed around its launch (0: none known).
  std::vector<KernelActivity> resolved_records() {
    std::lock_guard lock(g_activity_mutex);
    return resolved_records_locked();
  }
  static std::vector<KernelActivity> resolved_records_locked() {
    std::vector<KernelActivity> out;
    out.reserve(g_kernels.size());
    for (const RawKernel& k : g_kernels) {
      const auto it = g_external.find(k.correlation);
      out.push_back({k.start, k.end, it != g_external.end() ? it->second : 0});
    }
    return out;
  }

  std::string load_generator(int major, int minor) {
    std::string image;
    if (std::string e = compile_input_generator(major, minor, image); !e.empty()) return e;
    CUmodule m = nullptr;
    if (CUresult rc = cu_.cuModuleLoadData(&m, image.data()); rc != CUDA_SUCCESS) {
      return "loading the harness's input generator failed: " + error_name(rc);
    }
    if (CUresult rc = cu_.cuModuleGetFunction(&generator_, m, "leap_generate_inputs"); rc != CUDA_SUCCESS) {
      return "the input generator module lacks its kernel: " + error_name(rc);
    }
    if (CUresult rc = cu_.cuModuleGetFunction(&compare_, m, "leap_compare_outputs"); rc != CUDA_SUCCESS) {
      return "the harness's module lacks its comparison kernel: " + error_name(rc);
    }
    return {};
  }

  // The clean flush's read kernel (l2_flush.hpp), compiled for this device like the generator.
  std::string load_l2_reader(int major, int minor) {
    const std::string cc = std::to_string(major) + std::to_string(minor);
    std::string image;
    for (const std::string& arch : {"sm_" + cc, "compute_" + cc}) {  // PTX where NVRTC predates the device
      nvrtcProgram prog = nullptr;
      if (nvrtcCreateProgram(&prog, k_l2_reader_code, "leap_l2_reader.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) break;
      struct Guard {
        nvrtcProgram* p;
        ~Guard() { nvrtcDestroyProgram(p); }
      } guard{&prog};
      const std::string flag = "--gpu-architecture=" + arch;
      const char* opts[] = {flag.c_str()};
      const bool cubin = arch[0] == 's';
      std::size_t n = 0;
      if (nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS) continue;
      if ((cubin ? nvrtcGetCUBINSize(prog, &n) : nvrtcGetPTXSize(prog, &n)) != NVRTC_SUCCESS || n == 0) continue;
      image.assign(n, '\0');
      if ((cubin ? nvrtcGetCUBIN(prog, image.data()) : nvrtcGetPTX(prog, image.data())) == NVRTC_SUCCESS) break;
      image.clear();
    }
    if (image.empty()) {
      return "NVRTC could not compile the L2 flush's read kernel for sm_" + cc +
             " (LEAP_SANDBOX_L2_FLUSH=dirty does without it)";
    }
    CUmodule m = nullptr;
    if (CUresult rc = cu_.cuModuleLoadData(&m, image.data()); rc != CUDA_SUCCESS) {
      return "loading the L2 flush's read kernel failed: " + error_name(rc);
    }
    if (CUresult rc = cu_.cuModuleGetFunction(&l2_reader_, m, "leap_read_for_l2"); rc != CUDA_SUCCESS) {
      return "the L2 flush's module lacks its kernel: " + error_name(rc);
    }
    return {};
  }

  Symbols cu_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  std::string name_;
  bool pageable_ = false;
  unsigned shared_optin_ = 48 * 1024;
  CUdeviceptr scratch_ = 0;
  std::size_t scratch_bytes_ = 0;
  unsigned flushes_ = 0;
  unsigned sm_count_ = 1;
  L2Flush flush_ = L2Flush::clean;
  CUfunction l2_reader_ = nullptr;
  CUevent ev0_ = nullptr, ev1_ = nullptr;
  CUfunction generator_ = nullptr, compare_ = nullptr;
  double peak_bandwidth_ = 0.0;
  bool activity_ = false, external_ids_ = false;
  std::string activity_note_;
};

}  // namespace

std::unique_ptr<GpuDriver> open_cuda_driver(const GpuRunnerConfig& config, std::string& error) {
  auto d = std::make_unique<CudaDriver>();
  error = d->open(config);
  if (!error.empty()) return nullptr;
  return d;
}

}  // namespace leap::sandbox::detail

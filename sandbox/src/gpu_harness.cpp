// SPDX-License-Identifier: Apache-2.0
// Runs inside a worker process only. The driver is dlopen'ed (never linked); CUPTI records every
// kernel of the timed windows, on every stream.
#include "gpu_harness.hpp"

#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "leap/sandbox/check.hpp"
#include "leap/sandbox/task.hpp"

namespace leap::sandbox::detail {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// The symbol names come from cuda.h's own macros (cuMemAlloc -> cuMemAlloc_v2, ...), so the ABI
// version we call is the one the declarations describe.
#define LEAP_STR2(x) #x
#define LEAP_STR(x) LEAP_STR2(x)
#define LEAP_CU_FUNCS(X)                                                                                          \
  X(cuInit) X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) \
  X(cuCtxSynchronize) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncSetAttribute)              \
  X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemsetD8) X(cuMemsetD16)          \
  X(cuMemsetD32) X(cuEventCreate) X(cuEventRecord) X(cuEventDestroy) X(cuGetErrorName)
#define LEAP_CU_OPTIONAL(X) X(cuCtxSetLimit) X(cuCtxResetPersistingL2Cache) X(cuGetErrorString)

struct Driver {
#define LEAP_DECLARE(F) decltype(&::F) F = nullptr;
  LEAP_CU_FUNCS(LEAP_DECLARE)
  LEAP_CU_OPTIONAL(LEAP_DECLARE)
#undef LEAP_DECLARE
  CUresult (*event_elapsed)(float*, CUevent, CUevent) = nullptr;
  void* lib = nullptr;

  std::string load(const std::string& path) {
    lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) {
      const char* e = ::dlerror();
      return "cannot load " + path + ": " + (e != nullptr ? e : "unknown error");
    }
#define LEAP_LOAD(F)                                                   \
  F = reinterpret_cast<decltype(F)>(::dlsym(lib, LEAP_STR(F)));       \
  if (F == nullptr) return path + " lacks " LEAP_STR(F);
    LEAP_CU_FUNCS(LEAP_LOAD)
#undef LEAP_LOAD
#define LEAP_LOAD_OPT(F) F = reinterpret_cast<decltype(F)>(::dlsym(lib, LEAP_STR(F)));
    LEAP_CU_OPTIONAL(LEAP_LOAD_OPT)
#undef LEAP_LOAD_OPT
    // cuda.h 13 maps cuEventElapsedTime to _v2 (driver 12.8+); older drivers have the plain one.
    event_elapsed = reinterpret_cast<decltype(event_elapsed)>(::dlsym(lib, LEAP_STR(cuEventElapsedTime)));
    if (event_elapsed == nullptr) event_elapsed = reinterpret_cast<decltype(event_elapsed)>(::dlsym(lib, "cuEventElapsedTime"));
    if (event_elapsed == nullptr) return path + " lacks cuEventElapsedTime";
    return {};
  }

  std::string name(CUresult r) const {
    const char* s = nullptr;
    if (cuGetErrorName != nullptr && cuGetErrorName(r, &s) == CUDA_SUCCESS && s != nullptr) return s;
    return "CUDA error " + std::to_string(static_cast<int>(r));
  }
  std::string text(CUresult r) const {
    const char* s = nullptr;
    if (cuGetErrorString != nullptr && cuGetErrorString(r, &s) == CUDA_SUCCESS && s != nullptr) return s;
    return {};
  }
};

// ---- CUPTI activity records ------------------------------------------------------------------------
struct KernelRecord {
  std::uint64_t start = 0, end = 0;
  std::uint32_t stream = 0;
};
std::mutex g_records_mutex;
std::vector<KernelRecord> g_records;
constexpr std::size_t k_cupti_buffer = 4u << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, k_cupti_buffer));
  *size = *buffer != nullptr ? k_cupti_buffer : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  std::lock_guard lock(g_records_mutex);
  CUpti_Activity* rec = nullptr;
  while (buffer != nullptr && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
      if (k->end > k->start) g_records.push_back({k->start, k->end, k->streamId});
    }
  }
  std::free(buffer);
}

std::string cupti_error(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s != nullptr ? s : "CUPTI error " + std::to_string(static_cast<int>(r));
}

// ---- the worker's CUDA state, set up once per worker -----------------------------------------------
struct Gpu {
  Driver drv;
  bool ready = false;
  std::string init_error;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  std::string device_name;
  CUdeviceptr scratch = 0;  // written between timed runs to evict the L2
  std::size_t scratch_bytes = 0;
  bool cupti = false;
  std::string cupti_note;
  CUevent ev0 = nullptr, ev1 = nullptr;
};

Gpu& gpu_state() {
  static Gpu g;
  return g;
}

#define LEAP_CHECK_INIT(call)                                                    \
  if (CUresult rc_ = (call); rc_ != CUDA_SUCCESS) {                              \
    g.init_error = std::string(#call " failed: ") + g.drv.name(rc_);             \
    return false;                                                                \
  }

bool init_gpu(const WorkerConfig& config, const StageFn& stage) {
  Gpu& g = gpu_state();
  if (g.ready) return true;
  if (!g.init_error.empty()) return false;
  stage("init");
  if (std::string e = g.drv.load(config.driver_library); !e.empty()) {
    g.init_error = e;
    return false;
  }
  // CUPTI first, so the context is created with activity collection already on.
  if (CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed); r != CUPTI_SUCCESS) {
    g.cupti_note = "cuptiActivityRegisterCallbacks: " + cupti_error(r);
  } else if (CUptiResult r2 = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); r2 != CUPTI_SUCCESS) {
    g.cupti_note = "cuptiActivityEnable(CONCURRENT_KERNEL): " + cupti_error(r2);
  } else {
    g.cupti = true;
  }
  LEAP_CHECK_INIT(g.drv.cuInit(0));
  LEAP_CHECK_INIT(g.drv.cuDeviceGet(&g.dev, config.device));
  char name[256] = {};
  g.drv.cuDeviceGetName(name, static_cast<int>(sizeof name) - 1, g.dev);
  g.device_name = name;
  LEAP_CHECK_INIT(g.drv.cuDevicePrimaryCtxRetain(&g.ctx, g.dev));
  LEAP_CHECK_INIT(g.drv.cuCtxSetCurrent(g.ctx));
  // No persisting L2 carve-out: every timed run starts from the same, flushed cache.
  if (g.drv.cuCtxSetLimit != nullptr) g.drv.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0);
  int l2 = 0;
  g.drv.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, g.dev);
  g.scratch_bytes = std::max<std::size_t>(static_cast<std::size_t>(l2) * 2, std::size_t{64} << 20);
  LEAP_CHECK_INIT(g.drv.cuMemAlloc(&g.scratch, g.scratch_bytes));
  LEAP_CHECK_INIT(g.drv.cuEventCreate(&g.ev0, CU_EVENT_DEFAULT));
  LEAP_CHECK_INIT(g.drv.cuEventCreate(&g.ev1, CU_EVENT_DEFAULT));
  g.ready = true;
  stage("ready");
  return true;
}

// ---- buffers with guard zones -----------------------------------------------------------------------
constexpr std::size_t k_guard = 4096;
constexpr unsigned char k_canary = 0xA5;

struct DevBuf {
  CUdeviceptr alloc = 0, ptr = 0;
  std::size_t bytes = 0;
};

struct Module {
  Driver* drv = nullptr;
  CUmodule mod = nullptr;
  ~Module() {
    if (mod != nullptr) drv->cuModuleUnload(mod);
  }
};

struct RunError {
  CUresult rc = CUDA_SUCCESS;
  std::string where;
};

class Harness {
 public:
  Harness(Gpu& g, const TaskSpec& t) : g_(g), d_(g.drv), t_(t) {}
  ~Harness() { release(); }

  void release() {
    for (auto* set : {&cand_, &ref_}) {
      for (DevBuf& b : *set) {
        if (b.alloc != 0) d_.cuMemFree(b.alloc);
      }
      set->clear();
    }
  }

  CUresult allocate(const Sizes& sizes) {
    release();
    for (auto* set : {&cand_, &ref_}) {
      set->resize(t_.params.size());
      for (std::size_t i = 0; i < t_.params.size(); ++i) {
        const Param& p = t_.params[i];
        if (p.kind != ParamKind::buffer) continue;
        DevBuf& b = (*set)[i];
        b.bytes = element_count(p, sizes) * dtype_size(p.dtype);
        if (CUresult rc = d_.cuMemAlloc(&b.alloc, b.bytes + 2 * k_guard); rc != CUDA_SUCCESS) return rc;
        b.ptr = b.alloc + k_guard;
      }
    }
    return CUDA_SUCCESS;
  }

  // Guards armed, inputs uploaded, outputs poisoned.
  CUresult prepare(std::vector<DevBuf>& set, const std::vector<std::vector<unsigned char>>& host, std::uint64_t seed) {
    for (std::size_t i = 0; i < t_.params.size(); ++i) {
      const Param& p = t_.params[i];
      if (p.kind != ParamKind::buffer) continue;
      DevBuf& b = set[i];
      if (CUresult rc = d_.cuMemsetD8(b.alloc, k_canary, b.bytes + 2 * k_guard); rc != CUDA_SUCCESS) return rc;
      CUresult rc = CUDA_SUCCESS;
      if (p.role == Role::out) rc = poison(p, b, seed);
      else rc = d_.cuMemcpyHtoD(b.ptr, host[i].data(), b.bytes);
      if (rc != CUDA_SUCCESS) return rc;
    }
    return d_.cuCtxSynchronize();
  }

  CUresult poison(const Param& p, const DevBuf& b, std::uint64_t seed) {
    const std::uint32_t pat = poison_pattern(p.dtype, seed);
    if (dtype_size(p.dtype) == 2) return d_.cuMemsetD16(b.ptr, static_cast<unsigned short>(pat), b.bytes / 2);
    return d_.cuMemsetD32(b.ptr, pat, b.bytes / 4);
  }

  CUresult launch(CUfunction f, const std::vector<DevBuf>& set, const Sizes& sizes) {
    const ResolvedLaunch l = resolve_launch(t_, sizes);
    std::vector<std::uint64_t> slots(t_.params.size(), 0);
    std::vector<void*> args(t_.params.size(), nullptr);
    for (std::size_t i = 0; i < t_.params.size(); ++i) {
      const Param& p = t_.params[i];
      if (p.kind == ParamKind::buffer) {
        const std::uint64_t ptr = set[i].ptr;
        std::memcpy(&slots[i], &ptr, sizeof ptr);
      } else if (p.dtype == DType::int32) {
        const auto v = static_cast<std::int32_t>(eval_size_expr(p.value, sizes));
        std::memcpy(&slots[i], &v, sizeof v);
      } else {
        float v = 0.0f;
        try {
          v = static_cast<float>(eval_size_expr(p.value, sizes));
        } catch (const std::invalid_argument&) {
          v = std::strtof(p.value.c_str(), nullptr);
        }
        std::memcpy(&slots[i], &v, sizeof v);
      }
      args[i] = &slots[i];
    }
    if (l.shared_bytes > 48 * 1024) {
      d_.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(l.shared_bytes));
    }
    return d_.cuLaunchKernel(f, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2], l.shared_bytes, nullptr,
                             args.data(), nullptr);
  }

  CUresult run(CUfunction f, const std::vector<DevBuf>& set, const Sizes& sizes) {
    if (CUresult rc = launch(f, set, sizes); rc != CUDA_SUCCESS) return rc;
    return d_.cuCtxSynchronize();
  }

  CUresult download(const DevBuf& b, std::vector<unsigned char>& out) {
    out.resize(b.bytes);
    return d_.cuMemcpyDtoH(out.data(), b.ptr, b.bytes);
  }

  // Bytes of the guard zones that no longer hold the canary (before, after).
  CUresult guard_damage(const DevBuf& b, std::size_t& before, std::size_t& after) {
    std::vector<unsigned char> head(k_guard), tail(k_guard);
    if (CUresult rc = d_.cuMemcpyDtoH(head.data(), b.alloc, k_guard); rc != CUDA_SUCCESS) return rc;
    if (CUresult rc = d_.cuMemcpyDtoH(tail.data(), b.ptr + b.bytes, k_guard); rc != CUDA_SUCCESS) return rc;
    before = static_cast<std::size_t>(std::count_if(head.begin(), head.end(), [](unsigned char c) { return c != k_canary; }));
    after = static_cast<std::size_t>(std::count_if(tail.begin(), tail.end(), [](unsigned char c) { return c != k_canary; }));
    return CUDA_SUCCESS;
  }

  std::vector<DevBuf>& cand() { return cand_; }
  std::vector<DevBuf>& ref() { return ref_; }

 private:
  Gpu& g_;
  Driver& d_;
  const TaskSpec& t_;
  std::vector<DevBuf> cand_, ref_;
};

std::string sizes_text(const Sizes& s) {
  std::string out = "{";
  for (const auto& [k, v] : s) out += (out.size() > 1 ? ", " : "") + k + "=" + std::to_string(v);
  return out + "}";
}

struct Stats {
  double median = NAN, p25 = NAN, p75 = NAN, min = NAN, spread = NAN;
};

Stats stats(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto q = [&](double f) {
    const double pos = f * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(pos);
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  s.median = q(0.5);
  s.p25 = q(0.25);
  s.p75 = q(0.75);
  s.min = v.front();
  s.spread = s.median > 0 ? (s.p75 - s.p25) / s.median : NAN;
  return s;
}

json stats_json(const Stats& s, std::size_t runs) {
  return {{"median_ms", s.median}, {"p25_ms", s.p25}, {"p75_ms", s.p75}, {"min_ms", s.min}, {"spread", s.spread}, {"runs", runs}};
}

json runtime_error(const Driver& d, CUresult rc, const std::string& where) {
  const std::string name = d.name(rc), text = d.text(rc);
  return {{"ok", true},
          {"verdict", "runtime_error"},
          {"cuda_error", name},
          {"detail", name + (text.empty() ? "" : " (" + text + ")") + " " + where},
          {"restart", true}};
}

json harness_error(const std::string& what, bool restart) { return {{"ok", false}, {"error", what}, {"restart", restart}}; }

}  // namespace

json gpu_eval(const json& request, const WorkerConfig& config, const StageFn& stage) {
  if (!init_gpu(config, stage)) return harness_error("GPU initialisation failed: " + gpu_state().init_error, true);
  Gpu& g = gpu_state();
  Driver& d = g.drv;
  const TaskSpec task = parse_task(request.at("task").get<std::string>());
  const auto& cand_bin = request.at("candidate").get_binary();
  const auto& ref_bin = request.at("reference").get_binary();
  const std::uint64_t base_seed = request.value("seed", std::uint64_t{1});
  const bool do_time = request.value("time", true);

  Module cand_mod{&d}, ref_mod{&d};
  CUfunction cand_fn = nullptr, ref_fn = nullptr;
  stage("load");
  if (CUresult rc = d.cuModuleLoadData(&ref_mod.mod, ref_bin.data()); rc != CUDA_SUCCESS) {
    return harness_error("loading the reference module failed: " + d.name(rc), true);
  }
  if (CUresult rc = d.cuModuleGetFunction(&ref_fn, ref_mod.mod, task.entry.c_str()); rc != CUDA_SUCCESS) {
    return harness_error("the reference has no kernel '" + task.entry + "': " + d.name(rc), false);
  }
  if (CUresult rc = d.cuModuleLoadData(&cand_mod.mod, cand_bin.data()); rc != CUDA_SUCCESS) {
    return runtime_error(d, rc, "while loading the candidate's module");
  }
  if (CUresult rc = d.cuModuleGetFunction(&cand_fn, cand_mod.mod, task.entry.c_str()); rc != CUDA_SUCCESS) {
    return runtime_error(d, rc, "looking up kernel '" + task.entry + "' (declare it extern \"C\" __global__)");
  }

  Harness h(g, task);
  // Ragged check sizes first (cheap, and they catch edge bugs); the timing sizes last, so their
  // buffers are still allocated for timing.
  std::vector<Sizes> size_sets = task.check_sizes;
  size_sets.push_back(task.sizes);
  std::uint64_t trial_no = 0;
  int trials_run = 0;
  for (const Sizes& sizes : size_sets) {
    if (CUresult rc = h.allocate(sizes); rc != CUDA_SUCCESS) return harness_error("allocating buffers failed: " + d.name(rc), true);
    std::vector<std::vector<unsigned char>> host(task.params.size()), cand_out(task.params.size()), ref_out(task.params.size());
    for (int trial = 0; trial < task.trials; ++trial) {
      const std::uint64_t seed = trial_seed(base_seed, trial_no++);
      const std::string where = "(trial " + std::to_string(trial + 1) + ", sizes " + sizes_text(sizes) + ")";
      for (std::size_t i = 0; i < task.params.size(); ++i) {
        const Param& p = task.params[i];
        if (p.kind != ParamKind::buffer || p.role == Role::out) continue;
        const std::size_t n = element_count(p, sizes);
        host[i].assign(n * dtype_size(p.dtype), 0);
        generate(p.dtype, p.generator, trial_seed(seed, i), host[i].data(), n);
      }
      // The candidate first: nothing it can find in memory holds this trial's answer yet.
      stage("candidate");
      if (CUresult rc = h.prepare(h.cand(), host, seed); rc != CUDA_SUCCESS) return harness_error("preparing buffers failed: " + d.name(rc), true);
      if (CUresult rc = h.run(cand_fn, h.cand(), sizes); rc != CUDA_SUCCESS) return runtime_error(d, rc, where);
      for (std::size_t i = 0; i < task.params.size(); ++i) {
        const Param& p = task.params[i];
        if (p.kind != ParamKind::buffer) continue;
        if (CUresult rc = h.download(h.cand()[i], cand_out[i]); rc != CUDA_SUCCESS) return runtime_error(d, rc, where);
        std::size_t before = 0, after = 0;
        if (CUresult rc = h.guard_damage(h.cand()[i], before, after); rc != CUDA_SUCCESS) return runtime_error(d, rc, where);
        if (before + after > 0) {
          return {{"ok", true}, {"verdict", "wrong_answer"},
                  {"detail", "wrote outside buffer '" + p.name + "' (" + std::to_string(before) + " bytes before its start, " +
                                 std::to_string(after) + " after its end) " + where}};
        }
        if (p.role == Role::in && cand_out[i] != host[i]) {
          return {{"ok", true}, {"verdict", "wrong_answer"}, {"detail", "modified its input '" + p.name + "' " + where}};
        }
      }
      stage("reference");
      if (CUresult rc = h.prepare(h.ref(), host, seed); rc != CUDA_SUCCESS) return harness_error("preparing buffers failed: " + d.name(rc), true);
      if (CUresult rc = h.run(ref_fn, h.ref(), sizes); rc != CUDA_SUCCESS) {
        return harness_error("the reference kernel failed: " + d.name(rc) + " " + where, true);
      }
      for (std::size_t i = 0; i < task.params.size(); ++i) {
        const Param& p = task.params[i];
        if (p.kind != ParamKind::buffer || p.role == Role::in) continue;
        if (CUresult rc = h.download(h.ref()[i], ref_out[i]); rc != CUDA_SUCCESS) return harness_error("download failed: " + d.name(rc), true);
        h.poison(p, h.ref()[i], seed);  // the answer does not linger where a later candidate could find it
      }
      d.cuCtxSynchronize();
      ++trials_run;
      for (std::size_t i = 0; i < task.params.size(); ++i) {
        const Param& p = task.params[i];
        if (p.kind != ParamKind::buffer || p.role == Role::in) continue;
        const std::size_t n = element_count(p, sizes);
        const Comparison c = compare(p.dtype, cand_out[i].data(), ref_out[i].data(), n, task.tolerance_for(p.dtype));
        if (!c.ok) {
          return {{"ok", true}, {"verdict", "wrong_answer"}, {"detail", describe(c, p.name, n) + " " + where},
                  {"trials", trials_run}, {"first_index", c.first_index}, {"expected", c.first_expected},
                  {"actual", std::isnan(c.first_actual) ? json("nan") : json(c.first_actual)},
                  {"max_abs_error", c.max_abs_error}, {"max_rel_error", c.max_rel_error}};
        }
      }
    }
  }
  json reply = {{"ok", true}, {"verdict", "correct"}, {"trials", trials_run}, {"device", g.device_name}};
  if (!do_time) return reply;

  // ---- timing, on the timing sizes' buffers (still allocated) ----------------------------------------
  const TimingSettings& ts = task.timing;
  const Sizes& sizes = task.sizes;
  stage("timing");
  for (int w = 0; w < ts.warmup; ++w) {
    if (CUresult rc = h.run(cand_fn, h.cand(), sizes); rc != CUDA_SUCCESS) return runtime_error(d, rc, "(warm-up run)");
    if (CUresult rc = h.run(ref_fn, h.ref(), sizes); rc != CUDA_SUCCESS) return harness_error("the reference failed in warm-up: " + d.name(rc), true);
  }
  struct Window {
    std::uint64_t t0, t1;
  };
  std::vector<Window> windows[2];
  std::vector<double> event_ms[2], wall_ms[2];
  {
    std::lock_guard lock(g_records_mutex);
    g_records.clear();
  }
  const auto t_start = Clock::now();
  const std::size_t words = g.scratch_bytes / 4;
  for (int rep = 0; rep < ts.max_reps; ++rep) {
    for (int k = 0; k < 2; ++k) {
      const int which = (rep % 2 == 0) ? k : 1 - k;  // alternate the order against drift
      CUfunction f = which == 0 ? cand_fn : ref_fn;
      auto& set = which == 0 ? h.cand() : h.ref();
      d.cuMemsetD32(g.scratch, static_cast<unsigned>(rep * 2 + k), words);  // evict the L2
      if (d.cuCtxResetPersistingL2Cache != nullptr) d.cuCtxResetPersistingL2Cache();
      d.cuCtxSynchronize();
      stage(which == 0 ? "timing:candidate" : "timing:reference");
      std::uint64_t c0 = 0, c1 = 0;
      cuptiGetTimestamp(&c0);
      const auto w0 = Clock::now();
      d.cuEventRecord(g.ev0, nullptr);
      CUresult rc = h.launch(f, set, sizes);
      d.cuEventRecord(g.ev1, nullptr);
      if (rc == CUDA_SUCCESS) rc = d.cuCtxSynchronize();
      const auto w1 = Clock::now();
      cuptiGetTimestamp(&c1);
      if (rc != CUDA_SUCCESS) {
        if (which == 0) return runtime_error(d, rc, "(timed run " + std::to_string(rep + 1) + ")");
        return harness_error("the reference failed while timed: " + d.name(rc), true);
      }
      float ms = 0.0f;
      d.event_elapsed(&ms, g.ev0, g.ev1);
      windows[which].push_back({c0, c1});
      event_ms[which].push_back(ms);
      wall_ms[which].push_back(std::chrono::duration<double, std::milli>(w1 - w0).count());
    }
    const bool enough = rep + 1 >= ts.min_reps && stats(event_ms[0]).spread <= ts.target_spread &&
                        stats(event_ms[1]).spread <= ts.target_spread;
    const bool out_of_budget = rep + 1 >= ts.min_reps &&
                               Clock::now() - t_start > std::chrono::milliseconds(2 * static_cast<long long>(ts.budget_ms));
    if (enough || out_of_budget) break;
  }
  std::vector<KernelRecord> records;
  std::string cupti_note = g.cupti_note;
  if (g.cupti) {
    if (CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); r != CUPTI_SUCCESS) cupti_note = "cuptiActivityFlushAll: " + cupti_error(r);
    std::lock_guard lock(g_records_mutex);
    records.swap(g_records);
  }
  // A window's time: first kernel start to last kernel end, over every kernel on every stream.
  std::vector<double> cupti_ms[2];
  bool cupti_complete = g.cupti;
  for (int which = 0; which < 2 && cupti_complete; ++which) {
    for (const Window& w : windows[which]) {
      std::uint64_t lo = UINT64_MAX, hi = 0;
      for (const KernelRecord& r : records) {
        if (r.start >= w.t0 && r.start <= w.t1) {
          lo = std::min(lo, r.start);
          hi = std::max(hi, r.end);
        }
      }
      if (hi <= lo) {
        cupti_complete = false;
        if (cupti_note.empty()) cupti_note = "CUPTI delivered no kernel record for a timed window";
        break;
      }
      cupti_ms[which].push_back(static_cast<double>(hi - lo) * 1e-6);
    }
  }
  json timing = {{"method", cupti_complete ? "cupti" : "events"}};
  if (!cupti_note.empty()) timing["note"] = cupti_note;
  const char* names[2] = {"candidate", "reference"};
  for (int which = 0; which < 2; ++which) {
    json k = stats_json(stats(cupti_complete ? cupti_ms[which] : event_ms[which]), event_ms[which].size());
    k["events_median_ms"] = stats(event_ms[which]).median;
    k["wall_median_ms"] = stats(wall_ms[which]).median;
    if (cupti_complete) k["cupti_median_ms"] = stats(cupti_ms[which]).median;
    timing[names[which]] = std::move(k);
  }
  reply["timing"] = std::move(timing);
  return reply;
}

}  // namespace leap::sandbox::detail

// SPDX-License-Identifier: Apache-2.0
#include "verify/device_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "evaluation/output_poison.hpp"
#include "evaluation/timing_statistics.hpp"

namespace leap::sandbox::verify {

namespace dt = leap::sandbox::detail;

DeviceTiming timing_of(const TaskSpec& task) {
  return {task.timing.warmup, task.timing.min_reps, task.timing.max_reps, task.timing.target_spread,
          static_cast<double>(task.timing.budget_ms)};
}

namespace {

// A driver call that failed, in the words the failure reports.
struct DeviceFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Everything one run holds on the device, released in the destructor whatever happened.
class DeviceSession {
 public:
  explicit DeviceSession(dt::GpuDriver& gpu) : gpu_(gpu) {}
  DeviceSession(const DeviceSession&) = delete;
  DeviceSession& operator=(const DeviceSession&) = delete;
  ~DeviceSession() {
    for (dt::DevicePtr p : allocations_) gpu_.release(p);
    if (module_ != nullptr) gpu_.unload_module(module_);
  }

  void check(dt::DeviceStatus status, const std::string& what) const {
    if (status != dt::k_device_ok) {
      std::string text = what + ": " + gpu_.error_name(status);
      if (const std::string sentence = gpu_.error_text(status); !sentence.empty()) text += " (" + sentence + ")";
      throw DeviceFailure(text);
    }
  }

  void load(std::string_view image) { check(gpu_.load_module(image, module_), "loading the module"); }

  // The kernel of `name`, opted in to its dynamic shared memory when that is above 48 KiB, as the
  // driver asks (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) before such a launch.
  dt::FunctionHandle function(const std::string& name, unsigned dynamic_shared) {
    dt::FunctionHandle f = nullptr;
    check(gpu_.get_function(module_, name, f), "finding kernel '" + name + "'");
    unsigned static_bytes = 0;
    check(gpu_.static_shared_bytes(f, static_bytes), "reading kernel '" + name + "''s static shared memory");
    if (std::uint64_t{static_bytes} + dynamic_shared > 48 * 1024)
      check(gpu_.allow_dynamic_shared(f, dynamic_shared), "opting kernel '" + name + "' in to its shared memory");
    return f;
  }

  dt::DevicePtr allocate(std::size_t bytes, const std::string& what) {
    dt::DevicePtr p = 0;
    check(gpu_.allocate(std::max<std::size_t>(bytes, 1), p), "allocating " + what);
    allocations_.push_back(p);
    return p;
  }

  void poison(dt::DevicePtr p, DType dtype, std::uint64_t seed, std::size_t bytes, const std::string& what) {
    const std::uint32_t pattern = poison_pattern(dtype, seed);
    switch (dtype_size(dtype)) {
      case 1: check(gpu_.fill8(p, static_cast<std::uint8_t>(pattern), bytes), "poisoning " + what); break;
      case 2: check(gpu_.fill16(p, static_cast<std::uint16_t>(pattern), bytes / 2), "poisoning " + what); break;
      default: check(gpu_.fill32(p, pattern, bytes / 4), "poisoning " + what); break;
    }
  }

 private:
  dt::GpuDriver& gpu_;
  dt::ModuleHandle module_ = nullptr;
  std::vector<dt::DevicePtr> allocations_;
};

// The values a launch's argument pointers point at: device pointers and scalars, by parameter.
struct DeviceArguments {
  std::vector<dt::DevicePtr> buffers;  // by parameter; 0 for scalars
  std::vector<std::int32_t> ints;
  std::vector<float> floats;
  std::vector<dt::DevicePtr> scratch;  // by scratch buffer of the plan

  std::vector<void*> of(const ResolvedKernelLaunch& k, const TaskSpec& task) {
    std::vector<void*> args;
    for (const ResolvedArg& a : k.args) {
      if (a.scratch) args.push_back(&scratch[a.index]);
      else if (task.params[a.index].kind == ParamKind::buffer) args.push_back(&buffers[a.index]);
      else if (task.params[a.index].dtype == DType::int32) args.push_back(&ints[a.index]);
      else args.push_back(&floats[a.index]);
    }
    return args;
  }
};

struct PreparedLaunch {
  dt::FunctionHandle function = nullptr;
  dt::LaunchShape shape;
  std::vector<void*> args;
};

// The harness's summary of timed runs; the spread is 0, not NaN, when the median is not positive, so a
// run of zero-length events stops the timing and reads as a number in the report.
DeviceTimes times_of(const std::vector<double>& ms) {
  const dt::TimingStatistics s = dt::timing_statistics(ms);
  DeviceTimes t;
  t.reps = static_cast<int>(ms.size());
  t.median_ms = s.median;
  t.min_ms = s.min;
  t.max_ms = *std::max_element(ms.begin(), ms.end());
  t.spread = std::isnan(s.spread) ? 0.0 : s.spread;
  return t;
}

// Step by step: resolve the plan, upload, poison, prepare every launch, run once, read back, time.
class DeviceRunSteps {
 public:
  DeviceRunSteps(dt::GpuDriver& gpu, const SourcePlan& plan, const TaskSpec& task, const Trial& trial,
                 std::uint64_t poison_seed)
      : gpu_(gpu), session_(gpu), plan_(plan), task_(task), trial_(trial), poison_seed_(poison_seed) {}

  void resolve() {
    resolved_ = resolve_launch_plan(plan_.plan, task_, trial_.sizes,
                                    plan_.own_launch ? k_task_launch_bounds : task_.candidate_launch,
                                    {nullptr, gpu_.max_shared_bytes_optin(), nullptr});
  }

  void load(std::string_view image) { session_.load(image); }

  void upload_inputs() {
    const std::size_t np = task_.params.size();
    args_.buffers.assign(np, 0);
    args_.ints.assign(np, 0);
    args_.floats.assign(np, 0.0f);
    for (std::size_t i = 0; i < np; ++i) {
      const Param& p = task_.params[i];
      if (p.kind == ParamKind::scalar) {
        args_.ints[i] = static_cast<std::int32_t>(trial_.scalars[i]);
        args_.floats[i] = static_cast<float>(trial_.scalars[i]);
        continue;
      }
      const Bytes& b = trial_.buffers[i];
      args_.buffers[i] = session_.allocate(b.size(), "buffer '" + p.name + "'");
      if (is_input(p)) upload(i);
    }
    for (const ResolvedScratch& s : resolved_.scratch)
      args_.scratch.push_back(session_.allocate(s.bytes, "scratch '" + s.name + "'"));
  }

  // Out buffers and scratch poisoned, inout buffers restored: before every run, so no run starts from
  // what the one before it left.
  void reset_buffers() {
    for (std::size_t i = 0; i < task_.params.size(); ++i) {
      const Param& p = task_.params[i];
      if (p.kind != ParamKind::buffer) continue;
      if (p.role == Role::out)
        session_.poison(args_.buffers[i], p.dtype, poison_seed_, trial_.buffers[i].size(), "'" + p.name + "'");
      else if (p.role == Role::inout) upload(i);
    }
    for (std::size_t s = 0; s < resolved_.scratch.size(); ++s)
      session_.poison(args_.scratch[s], resolved_.scratch[s].dtype, poison_seed_ + 1, resolved_.scratch[s].bytes,
                      "scratch '" + resolved_.scratch[s].name + "'");
  }

  void prepare_launches() {
    for (const ResolvedKernelLaunch& k : resolved_.kernels) {
      PreparedLaunch l;
      l.function = session_.function(k.kernel, k.shape.shared_bytes);
      for (int d = 0; d < 3; ++d) {
        l.shape.grid[d] = k.shape.grid[d];
        l.shape.block[d] = k.shape.block[d];
      }
      l.shape.shared_bytes = k.shape.shared_bytes;
      l.args = args_.of(k, task_);
      launches_.push_back(std::move(l));
    }
  }

  void launch_plan() {
    for (PreparedLaunch& l : launches_)
      session_.check(gpu_.launch(l.function, l.shape, l.args.data(), l.args.size()), "launching the plan");
  }

  void run_once() {
    reset_buffers();
    launch_plan();
    session_.check(gpu_.synchronize(), "running the plan");
  }

  // One run between two events, from flushed caches and reset buffers (both outside the events).
  double timed_run() {
    reset_buffers();
    session_.check(gpu_.flush_caches(), "flushing the caches");
    session_.check(gpu_.record_start(), "recording the start event");
    launch_plan();
    session_.check(gpu_.record_stop(), "recording the stop event");
    session_.check(gpu_.synchronize(), "running the plan");
    double ms = 0;
    session_.check(gpu_.elapsed_ms(ms), "reading the events");
    return ms;
  }

  std::vector<Bytes> read_outputs() {
    std::vector<Bytes> out(task_.params.size());
    for (std::size_t i = 0; i < task_.params.size(); ++i) {
      if (!is_output(task_.params[i])) continue;
      out[i].resize(trial_.buffers[i].size());
      session_.check(gpu_.download(out[i].data(), args_.buffers[i], out[i].size()),
                     "reading '" + task_.params[i].name + "' back");
    }
    return out;
  }

  // Each timed run starts from flushed caches and reset buffers, outside the events around it.
  DeviceTimes time(const DeviceTiming& t) {
    for (int i = 0; i < t.warmup; ++i) run_once();
    std::vector<double> ms;
    double total = 0;
    for (;;) {
      ms.push_back(timed_run());
      total += ms.back();
      const int reps = static_cast<int>(ms.size());
      if (reps >= t.max_reps) break;
      if (reps >= t.min_reps && (total >= t.budget_ms || times_of(ms).spread <= t.target_spread)) break;
    }
    return times_of(ms);
  }

 private:
  void upload(std::size_t i) {
    const Bytes& b = trial_.buffers[i];
    session_.check(gpu_.upload(args_.buffers[i], b.data(), b.size()), "uploading '" + task_.params[i].name + "'");
  }

  dt::GpuDriver& gpu_;
  DeviceSession session_;
  const SourcePlan& plan_;
  const TaskSpec& task_;
  const Trial& trial_;
  std::uint64_t poison_seed_;
  ResolvedPlan resolved_;
  DeviceArguments args_;
  std::vector<PreparedLaunch> launches_;
};

}  // namespace

DeviceRun run_on_device(dt::GpuDriver& gpu, std::string_view image, const SourcePlan& plan, const TaskSpec& task,
                        const Trial& trial, std::uint64_t poison_seed, const DeviceTiming* time) {
  DeviceRun run;
  if (!plan.error.empty()) {
    run.failure = "launch plan: " + plan.error;
    return run;
  }
  DeviceRunSteps steps(gpu, plan, task, trial, poison_seed);
  try {
    steps.resolve();
  } catch (const std::invalid_argument& e) {  // LaunchPlanError, TaskError
    run.failure = std::string("launch plan refused: ") + e.what();
    return run;
  }
  try {
    steps.load(image);
    steps.upload_inputs();
    steps.prepare_launches();
    steps.run_once();
    run.outputs = steps.read_outputs();
    if (time != nullptr) {
      run.times = steps.time(*time);
      run.outputs_after_timing = steps.read_outputs();
    }
  } catch (const DeviceFailure& e) {
    run.failure = e.what();
    run.outputs.clear();
    run.outputs_after_timing.clear();
  }
  return run;
}

}  // namespace leap::sandbox::verify

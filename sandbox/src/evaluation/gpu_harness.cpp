// SPDX-License-Identifier: Apache-2.0
#include "evaluation/gpu_harness.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "confinement/confinement.hpp"
#include "evaluation/cuda_driver.hpp"
#include "evaluation/device_compare.hpp"
#include "evaluation/draw_check.hpp"
#include "compile/elf_kernels.hpp"
#include "evaluation/input_generator.hpp"
#include "evaluation/timing_floor.hpp"
#include "evaluation/timing_statistics.hpp"
#include "evaluation/activity_match.hpp"
#include "evaluation/correctness_inputs.hpp"
#include "evaluation/output_comparison.hpp"
#include "evaluation/output_poison.hpp"
#include "leap/sandbox/launch_plan.hpp"
#include "leap/sandbox/task.hpp"
#include "evaluation/runner_rules.hpp"
#include "task_spec/size_expr.hpp"
#include "runner_pipe/runner_stages.hpp"

namespace leap::sandbox::detail {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t k_guard = 4096;
constexpr unsigned char k_canary = 0xA5;
constexpr int k_max_warmup_launches = 1 << 14;  // per plan; a tiny kernel reaches 50 ms long before
// Scratch buffer i is poisoned from trial_seed(seed, k_scratch_seed_offset + i): far above the
// parameter indices i whose inputs are drawn from trial_seed(seed, i), so scratch never takes an
// input's stream.
constexpr std::uint64_t k_scratch_seed_offset = 0x5C2A7C4;
// A kernel's parameter block is at most 32764 bytes, so it has at most that many parameters.
constexpr std::size_t k_max_kernel_params = 32764;

// A reply that ends the evaluation early, carried out of the nested steps.
struct Finish {
  EvaluationReply reply;
};

EvaluationReply harness_error(const std::string& what) {
  EvaluationReply r;
  r.error = what;
  r.restart = true;
  return r;
}

EvaluationReply verdict_reply(Verdict v, const std::string& detail) {
  EvaluationReply r;
  r.ok = true;
  r.verdict = v;
  r.detail = detail;
  return r;
}

EvaluationReply wrong_answer(const std::string& detail, bool when_timed) {
  EvaluationReply r = verdict_reply(Verdict::wrong_answer, detail);
  r.when_timed = when_timed;
  return r;
}

struct DevBuf {
  DevicePtr alloc = 0, ptr = 0;
  std::size_t bytes = 0;
};

// One kernel of a plan with its arguments for one size set: pointers into `slots`.
struct KernelRun {
  std::string name;
  FunctionHandle function = nullptr;
  std::vector<std::uint64_t> slots;
  std::vector<void*> ptrs;
  std::size_t arg_count = 0;
  LaunchShape shape;
};
// A whole plan for one size set, built once before its runs; never copied (ptrs point into slots).
struct LaunchArgs {
  std::vector<KernelRun> kernels;
  LaunchArgs() = default;
  LaunchArgs(const LaunchArgs&) = delete;
  LaunchArgs& operator=(const LaunchArgs&) = delete;
};

// One side's timed runs, in order: each one's window (CUPTI timestamps around it, the external id
// its launches carry, its plan's kernel count).
struct Series {
  std::vector<RunWindow> windows;
  std::vector<double> event_ms, wall_ms;
};

// What the harness holds for one side of the comparison, the candidate or the reference: the same
// steps run for both, and only the candidate's failures are its verdict (the reference's are the
// harness's).
struct Side {
  bool candidate = false;
  std::string_view name;  // stage::candidate or stage::reference, as stage names use it
  std::string image;      // the module image as the request carried it
  ModuleHandle module = nullptr;
  LaunchPlan plan;  // the candidate's: its declared plan, else the task's
  LaunchPolicy policy = k_task_launch_bounds;
  ResolvedPlan resolved;                  // at the current size set
  std::vector<FunctionHandle> functions;  // by the plan's kernels
  std::vector<DevBuf> buffers;            // by task parameter
  std::unique_ptr<LaunchArgs> args;       // for the current size set
  Series series;                          // while timing
  std::uint64_t warm_up_draw = 0;         // which warm-up draw seeds this side's inputs

  Side(bool is_candidate, std::string_view side_name, std::uint64_t warm_up_input_draw)
      : candidate(is_candidate), name(side_name), warm_up_draw(warm_up_input_draw) {}
};

// Warm-up draws 0 and 1 seed the candidate's and the reference's inputs (Side::warm_up_draw); the
// candidate's scratch, poisoned before every warm-up launch, takes the draws from here on, one per
// launch, so no two poisonings repeat a pattern.
constexpr std::uint64_t k_first_warm_up_scratch_draw = 2;

EvaluationReply plan_refusal(const std::string& why) {
  EvaluationReply r = verdict_reply(Verdict::compile_error, "launch plan: " + why);
  r.plan_error = why;
  return r;
}

// One evaluation request carried out: the modules loaded, the correctness trials of both sides,
// the timing, and everything freed again (zeroed first) however it ends. Not leap::Evaluation, the
// verdict a trainer sees; this is the work that leads to one.
class EvaluationRun {
 public:
  EvaluationRun(GpuDriver& d, const StageFn& stage, const EvaluationRequest& request)
      : d_(d), stage_(stage), start_(d.host_now()) {
    task_ = parse_task(request.task);
    cand_.image = request.candidate;
    ref_.image = request.reference;
    ref_.plan = task_launch_plan(task_);
    cand_.plan = ref_.plan;
    if (request.plan) {
      PlanParse p = parse_launch_plan(*request.plan);
      if (!p.ok()) {
        plan_error_ = p.error;
      } else if (p.plan.empty()) {
        plan_error_ = "the request's plan declares no kernel";
      } else {
        cand_.plan = std::move(p.plan);
        cand_.policy = task_.candidate_launch;
        declared_plan_ = true;
      }
    }
    base_seed_ = request.seed;
    time_ = request.time;
    deadline_ = start_ + std::chrono::milliseconds(static_cast<long long>(k_time_limit_share * task_.time_limit_ms));
  }

  EvaluationRun(const EvaluationRun&) = delete;
  EvaluationRun& operator=(const EvaluationRun&) = delete;
  ~EvaluationRun() { clean_up(); }

  // Buffers scrubbed and freed, modules unloaded, activity records dropped; false when any of it
  // failed (the context is then suspect). Idempotent.
  bool clean_up() {
    if (cleaned_) return clean_ok_;
    cleaned_ = true;
    const bool freed = release_all();
    const bool cand = unload(cand_.module);
    const bool ref = unload(ref_.module);
    d_.activity_reset();
    clean_ok_ = freed && cand && ref;
    return clean_ok_;
  }

  // The most local memory per thread of any candidate kernel loaded so far (the runner's rules decide
  // whether the reservation it grew is worth a fresh runner).
  std::size_t local_bytes_per_thread() const { return local_bytes_; }

  EvaluationReply run() {
    d_.activity_reset();  // records from earlier evaluations are no business of this one
    // The candidate's plan, checked again here with the device's limits, before anything is loaded.
    if (!plan_error_.empty()) return plan_refusal(plan_error_);
    if (declared_plan_) {
      const PlanCheck c = check_candidate_plan(cand_.plan, task_, {nullptr, d_.max_shared_bytes_optin()});
      if (c.status != PlanStatus::ok) return plan_refusal(c.error);
    }
    load_modules();
    if (declared_plan_) check_shared_fits();
    EvaluationReply reply = check_trials();
    if (!time_) return reply;
    // Timing needs room for warm-up, some runs and their checks (a few trials' worth): without it,
    // the verdict stands untimed rather than running into the time limit.
    if (d_.host_now() +
            std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(4.0 * trial_seconds_)) >
        deadline_) {
      reply.timing.emplace().skipped = "the correctness trials took most of the task's time limit of " +
                                       std::to_string(task_.time_limit_ms) + " ms; no room was left to time the kernel";
      return reply;
    }
    reply.timing = time_and_check();
    return reply;
  }

 private:
  // ---- failures -----------------------------------------------------------------------------------
  [[noreturn]] void harness(DeviceStatus rc, const std::string& what) {
    throw Finish{harness_error(what + ": " + d_.error_name(rc))};
  }
  [[noreturn]] void candidate_failed(DeviceStatus rc, const std::string& where) {
    const std::string name = d_.error_name(rc), text = d_.error_text(rc);
    EvaluationReply r =
        verdict_reply(Verdict::runtime_error, name + (text.empty() ? "" : " (" + text + ")") + " " + where);
    r.cuda_error = name;
    r.restart = true;
    throw Finish{r};
  }
  void check(DeviceStatus rc, const std::string& what) {
    if (rc != k_device_ok) harness(rc, what);
  }

  // ---- modules ------------------------------------------------------------------------------------
  bool unload(ModuleHandle& m) {
    if (m == nullptr) return true;
    const bool ok = d_.unload_module(m) == k_device_ok;
    m = nullptr;
    return ok;
  }

  void load_modules() {
    stage_(stage::load);
    if (DeviceStatus rc = d_.load_module(ref_.image, ref_.module); rc != k_device_ok)
      harness(rc, "loading the reference module failed");
    ref_.functions.clear();
    for (const KernelLaunchDecl& k : ref_.plan.kernels) {
      FunctionHandle f = nullptr;
      if (DeviceStatus rc = d_.get_function(ref_.module, k.kernel, f); rc != k_device_ok) {
        EvaluationReply r = harness_error("the reference has no kernel '" + k.kernel + "': " + d_.error_name(rc));
        r.restart = false;  // the task's fault, not the context's
        throw Finish{r};
      }
      ref_.functions.push_back(f);
    }
    load_candidate();
    check_parameters();
  }

  void load_candidate() {
    if (DeviceStatus rc = d_.load_module(cand_.image, cand_.module); rc != k_device_ok)
      candidate_failed(rc, "while loading the candidate's module");
    cand_.functions.clear();
    for (const KernelLaunchDecl& k : cand_.plan.kernels) {
      FunctionHandle f = nullptr;
      if (DeviceStatus rc = d_.get_function(cand_.module, k.kernel, f); rc != k_device_ok) {
        candidate_failed(rc, "looking up kernel '" + k.kernel + "' (declare it extern \"C\" __global__)");
      }
      std::size_t local = 0;
      if (d_.local_bytes_per_thread(f, local) == k_device_ok) local_bytes_ = std::max(local_bytes_, local);
      cand_.functions.push_back(f);
    }
  }

  // Every launch's arguments against its kernel's parameters, count and bytes, before anything
  // runs (the parent checked them against the CUBIN too): the driver's account where it has one,
  // else the module's CUBIN. Past this, a launch passes exactly the pointers its kernel reads.
  void check_parameters() {
    const std::optional<KernelParams> ref = kernel_params(ref_.plan, ref_.functions, ref_.image);
    if (!ref)
      throw Finish{harness_error(
          "the reference module's kernel parameters could not be read (not from the driver, not from its CUBIN)")};
    try {
      resolve_launch_plan(ref_.plan, task_, task_.sizes, k_task_launch_bounds,
                          {nullptr, d_.max_shared_bytes_optin(), &*ref});
    } catch (const LaunchPlanError& e) {
      throw Finish{harness_error(std::string("the task's launch of the reference: ") + e.what())};
    }
    const std::optional<KernelParams> cand = kernel_params(cand_.plan, cand_.functions, cand_.image);
    if (!cand)
      throw Finish{plan_refusal(
          "the candidate module's kernel parameters could not be read, so no arguments can be matched to them")};
    resolve(cand_.plan, cand_.policy, task_.sizes, true, &*cand);
  }

  std::optional<KernelParams> kernel_params(const LaunchPlan& plan, const std::vector<FunctionHandle>& fns,
                                            std::string_view image) {
    KernelParams out;
    for (std::size_t k = 0; k < fns.size(); ++k) {
      std::vector<KernelParam> params;
      DeviceStatus rc = k_device_ok;
      for (std::size_t i = 0; i <= k_max_kernel_params; ++i) {
        std::size_t offset = 0, size = 0;
        if (rc = d_.param_info(fns[k], i, offset, size); rc != k_device_ok) break;
        if (i == k_max_kernel_params || offset > k_max_kernel_params || size > k_max_kernel_params) {
          throw Finish{harness_error("the driver describes kernel '" + plan.kernels[k].kernel +
                                     "' with a parameter block over " + std::to_string(k_max_kernel_params) +
                                     " bytes")};
        }
        params.push_back({static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(size)});
      }
      if (rc == k_device_not_supported) return cubin_kernel_params(image);  // a driver before 12.4
      if (rc != k_device_invalid_value)
        harness(rc, "reading the parameters of kernel '" + plan.kernels[k].kernel + "'");
      out[plan.kernels[k].kernel] = std::move(params);
    }
    return out;
  }

  // ---- buffers ------------------------------------------------------------------------------------
  // Freed memory is zeroed first: the next evaluation's kernels must find no answer in it.
  bool release_all() {
    bool ok = true;
    for (auto* set : {&cand_.buffers, &ref_.buffers, &scratch_, &compare_records_}) {
      for (DevBuf& b : *set) {
        if (b.alloc == 0) continue;
        ok = d_.fill8(b.alloc, 0, b.bytes + 2 * k_guard) == k_device_ok && ok;
        ok = d_.synchronize() == k_device_ok && ok;
        ok = d_.release(b.alloc) == k_device_ok && ok;
        b = {};
      }
      set->clear();
    }
    return ok;
  }

  void allocate(const Sizes& sizes) {
    if (!release_all()) throw Finish{harness_error("scrubbing and freeing the previous buffers failed")};
    for (Side* side : {&cand_, &ref_}) {
      side->buffers.resize(task_.params.size());
      for (std::size_t i = 0; i < task_.params.size(); ++i) {
        const Param& p = task_.params[i];
        if (p.kind != ParamKind::buffer) continue;
        side->buffers[i] = guarded_buffer(element_count(p, sizes) * dtype_size(p.dtype), "'" + p.name + "'");
      }
    }
    for (Side* side : {&cand_, &ref_}) side->resolved = resolve(side->plan, side->policy, sizes, side->candidate);
    // The candidate's scratch, guarded like its buffers.
    scratch_.resize(cand_.resolved.scratch.size());
    for (std::size_t i = 0; i < scratch_.size(); ++i) {
      scratch_[i] = guarded_buffer(cand_.resolved.scratch[i].bytes, "scratch '" + cand_.resolved.scratch[i].name + "'");
    }
  }

  // `bytes` of device memory between two guard zones holding the canary.
  DevBuf guarded_buffer(std::size_t bytes, const std::string& what) {
    DevBuf b;
    b.bytes = bytes;
    check(d_.allocate(b.bytes + 2 * k_guard, b.alloc), "allocating " + std::to_string(b.bytes) + " bytes for " + what);
    b.ptr = b.alloc + k_guard;
    check(d_.fill8(b.alloc, k_canary, b.bytes + 2 * k_guard), "arming the guards");
    return b;
  }

  ResolvedPlan resolve(const LaunchPlan& plan, const LaunchPolicy& policy, const Sizes& sizes, bool candidate,
                       const KernelParams* params = nullptr) {
    try {
      return resolve_launch_plan(plan, task_, sizes, policy, {nullptr, d_.max_shared_bytes_optin(), params});
    } catch (const LaunchPlanError& e) {
      if (candidate) throw Finish{plan_refusal(e.what())};
      throw Finish{harness_error(std::string("the task's launch: ") + e.what())};
    }
  }

  // A side's launch arguments for its buffers at `sizes`, in a fresh side.args.
  void build_args(Side& side, const Sizes& sizes) {
    side.args = std::make_unique<LaunchArgs>();
    LaunchArgs& a = *side.args;
    const ResolvedPlan& plan = side.resolved;
    const std::vector<FunctionHandle>& fns = side.functions;
    a.kernels.clear();
    a.kernels.resize(plan.kernels.size());
    for (std::size_t k = 0; k < plan.kernels.size(); ++k) {
      const ResolvedKernelLaunch& rk = plan.kernels[k];
      KernelRun& run = a.kernels[k];
      run.name = rk.kernel;
      run.function = fns.at(k);
      for (int i = 0; i < 3; ++i) {
        run.shape.grid[i] = rk.shape.grid[i];
        run.shape.block[i] = rk.shape.block[i];
      }
      run.shape.shared_bytes = rk.shape.shared_bytes;
      run.arg_count = rk.args.size();
      run.slots.assign(rk.args.size(), 0);
      for (std::size_t i = 0; i < rk.args.size(); ++i) run.slots[i] = arg_slot(rk.args[i], side.buffers, sizes);
      // One pointer per parameter, no more: check_parameters matched the arguments to the kernel's
      // parameters in count, and in bytes (4 or 8, within a slot).
      run.ptrs.assign(rk.args.size(), nullptr);
      for (std::size_t i = 0; i < rk.args.size(); ++i) run.ptrs[i] = &run.slots[i];
      allow_shared(run.function, run.shape, side.candidate);
    }
  }

  std::uint64_t arg_slot(const ResolvedArg& arg, const std::vector<DevBuf>& set, const Sizes& sizes) const {
    std::uint64_t slot = 0;
    if (arg.scratch) {
      const std::uint64_t ptr = scratch_.at(arg.index).ptr;
      std::memcpy(&slot, &ptr, sizeof ptr);
      return slot;
    }
    const Param& p = task_.params.at(arg.index);
    if (p.kind == ParamKind::buffer) {
      const std::uint64_t ptr = set.at(arg.index).ptr;
      std::memcpy(&slot, &ptr, sizeof ptr);
    } else if (p.dtype == DType::int32) {
      const auto v = static_cast<std::int32_t>(eval_size_expr(p.value, sizes));
      std::memcpy(&slot, &v, sizeof v);
    } else {
      float v = 0.0f;
      try {
        v = static_cast<float>(eval_size_expr(p.value, sizes));
      } catch (const std::invalid_argument&) {
        v = std::strtof(p.value.c_str(), nullptr);
      }
      std::memcpy(&slot, &v, sizeof v);
    }
    return slot;
  }

  // Every kernel of the plan in order; the first failing launch (its 1-based index), else ok.
  DeviceStatus launch_all(const LaunchArgs& a, std::size_t& failed_at) {
    for (std::size_t i = 0; i < a.kernels.size(); ++i) {
      const KernelRun& k = a.kernels[i];
      if (DeviceStatus rc = d_.launch(k.function, k.shape, const_cast<void**>(k.ptrs.data()), k.arg_count);
          rc != k_device_ok) {
        failed_at = i + 1;
        return rc;
      }
    }
    return k_device_ok;
  }
  // Where in a plan a failed launch surfaced. Kernels run asynchronously: a fault of an earlier
  // kernel is reported by the next launch, so the message says both.
  std::string in_kernel(const LaunchArgs& a, std::size_t failed_at) const {
    if (a.kernels.size() < 2 || failed_at == 0) return "";
    const std::string which = "kernel " + std::to_string(failed_at) + " of " + std::to_string(a.kernels.size()) +
                              ", '" + a.kernels[failed_at - 1].name + "'";
    return failed_at == 1 ? " (launching " + which + ")"
                          : " (at the launch of " + which + ", or in a kernel before it)";
  }

  // Above 48 KiB of shared memory, static and dynamic together, a kernel must be opted in for its
  // dynamic part, through the driver.
  void allow_shared(FunctionHandle f, const LaunchShape& s, bool candidate) {
    unsigned static_bytes = 0;
    check(d_.static_shared_bytes(f, static_bytes), "reading a kernel's static shared memory");
    if (std::uint64_t{static_bytes} + s.shared_bytes <= 48 * 1024) return;
    if (DeviceStatus rc = d_.allow_dynamic_shared(f, s.shared_bytes); rc != k_device_ok) {
      if (!candidate)
        harness(rc, "allowing the reference " + std::to_string(s.shared_bytes) + " bytes of dynamic shared memory");
      candidate_failed(rc, "allowing " + std::to_string(s.shared_bytes) +
                               " bytes of dynamic shared memory (the kernel's static shared "
                               "memory and the dynamic together must fit the device's " +
                               std::to_string(d_.max_shared_bytes_optin()) + " bytes)");
    }
  }

  // A declared plan's shared memory, the kernels' static and the plan's dynamic, against the
  // device's limit at every size set, before any launch (the static part is known only here).
  void check_shared_fits() {
    const std::vector<Sizes> size_sets = all_size_sets();
    std::vector<ResolvedPlan> plans;  // by size set, each resolved once
    for (const Sizes& sizes : size_sets) plans.push_back(resolve(cand_.plan, cand_.policy, sizes, true));
    const std::uint64_t limit = d_.max_shared_bytes_optin();
    for (std::size_t k = 0; k < cand_.functions.size(); ++k) {
      unsigned static_bytes = 0;
      check(d_.static_shared_bytes(cand_.functions[k], static_bytes), "reading a kernel's static shared memory");
      for (std::size_t s = 0; s < size_sets.size(); ++s) {
        const Sizes& sizes = size_sets[s];
        const std::uint64_t dynamic = plans[s].kernels[k].shape.shared_bytes;
        if (static_bytes + dynamic <= limit) continue;
        const KernelLaunchDecl& decl = cand_.plan.kernels[k];
        throw Finish{plan_refusal("line " + std::to_string(decl.line) + ", kernel '" + decl.kernel +
                                  "': " + std::to_string(static_bytes) + " bytes of static shared memory and " +
                                  std::to_string(dynamic) + " of dynamic (shared=" + decl.shared_bytes +
                                  ") are over the device's limit of " + std::to_string(limit) +
                                  " bytes per block (at sizes " + sizes_text(sizes) +
                                  "); shrink the kernel's __shared__ arrays or the plan's shared=")};
      }
    }
  }

  // The candidate's scratch poisoned: no run finds what an earlier one left there. Between the
  // candidate's launches (candidate_where non-empty) a failure is the candidate's: a fault is
  // reported asynchronously, by whichever call comes after it, and a memset is one of them.
  void poison_scratch(std::uint64_t seed, const std::string& candidate_where = {}) {
    for (std::size_t i = 0; i < scratch_.size(); ++i) {
      const DType dtype = cand_.resolved.scratch[i].dtype;
      const std::uint32_t pat = poison_pattern(dtype, trial_seed(seed, k_scratch_seed_offset + i));
      const DeviceStatus rc = fill_pattern(scratch_[i], dtype, pat);
      if (rc != k_device_ok && !candidate_where.empty()) candidate_failed(rc, candidate_where);
      check(rc, "poisoning scratch");
    }
  }

  // A buffer filled with its dtype's poison pattern, element by element.
  DeviceStatus fill_pattern(const DevBuf& b, DType dtype, std::uint32_t pat) {
    switch (dtype_size(dtype)) {
      case 1: return d_.fill8(b.ptr, static_cast<std::uint8_t>(pat), b.bytes);
      case 2: return d_.fill16(b.ptr, static_cast<std::uint16_t>(pat), b.bytes / 2);
      default: return d_.fill32(b.ptr, pat, b.bytes / 4);
    }
  }

  void poison(const Param& p, const DevBuf& b, std::uint64_t seed) {
    check(fill_pattern(b, p.dtype, poison_pattern(p.dtype, seed)), "poisoning '" + p.name + "'");
  }

  bool is_input(const Param& p) const { return p.kind == ParamKind::buffer && p.role != Role::out; }
  bool is_output(const Param& p) const { return p.kind == ParamKind::buffer && p.role != Role::in; }

  // Host-drawn inputs uploaded, outputs poisoned (the correctness trials).
  void prepare_from_host(Side& side, const std::vector<std::vector<unsigned char>>& host, std::uint64_t seed) {
    std::vector<DevBuf>& set = side.buffers;
    for (std::size_t i = 0; i < task_.params.size(); ++i) {
      const Param& p = task_.params[i];
      if (is_input(p)) check(d_.upload(set[i].ptr, host[i].data(), set[i].bytes), "uploading '" + p.name + "'");
      else if (is_output(p)) poison(p, set[i], seed);
    }
    if (side.candidate) poison_scratch(seed);
    check(d_.synchronize(), "preparing the buffers");
  }

  // Inputs drawn on the device from `seed` at the timing sizes, outputs poisoned (timed runs and their checks).
  void prepare_on_device(Side& side, std::uint64_t seed) {
    std::vector<DevBuf>& set = side.buffers;
    for (std::size_t i = 0; i < task_.params.size(); ++i) {
      const Param& p = task_.params[i];
      if (is_input(p)) {
        check(d_.generate_inputs(set[i].ptr, p.dtype, generator_at(p, task_.sizes), trial_seed(seed, i),
                                 set[i].bytes / dtype_size(p.dtype)),
              "drawing inputs for '" + p.name + "'");
      } else if (is_output(p)) {
        poison(p, set[i], seed);
      }
    }
    if (side.candidate) poison_scratch(seed);
  }

  void download(const DevBuf& b, std::vector<unsigned char>& out, const std::string& where, bool candidate) {
    out.resize(b.bytes);
    if (DeviceStatus rc = d_.download(out.data(), b.ptr, b.bytes); rc != k_device_ok) {
      if (candidate) candidate_failed(rc, where);
      harness(rc, "downloading results " + where);
    }
  }

  // Bytes of the guard zones that no longer hold the canary: (before, after).
  std::pair<std::size_t, std::size_t> guard_damage(const DevBuf& b, const std::string& where) {
    std::vector<unsigned char> head(k_guard), tail(k_guard);
    if (DeviceStatus rc = d_.download(head.data(), b.alloc, k_guard); rc != k_device_ok) candidate_failed(rc, where);
    if (DeviceStatus rc = d_.download(tail.data(), b.ptr + b.bytes, k_guard); rc != k_device_ok)
      candidate_failed(rc, where);
    auto bad = [](const std::vector<unsigned char>& v) {
      return static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](unsigned char c) { return c != k_canary; }));
    };
    return {bad(head), bad(tail)};
  }

  // The candidate's guards; after timing also the reference's (only the candidate ran untrusted code
  // in between, so damage there is its doing: an attempt to slow the reference down).
  void check_guards(const std::string& where, bool when_timed) {
    for (const Side* side : {&cand_, &ref_}) {
      if (!side->candidate && !when_timed) break;
      for (std::size_t i = 0; i < task_.params.size(); ++i) {
        const Param& p = task_.params[i];
        if (p.kind != ParamKind::buffer) continue;
        const auto [before, after] = guard_damage(side->buffers[i], where);
        if (before + after == 0) continue;
        const std::string counts =
            std::to_string(before) + " bytes before its start, " + std::to_string(after) + " after its end";
        if (side->candidate)
          throw Finish{wrong_answer("wrote outside buffer '" + p.name + "' (" + counts + ") " + where, when_timed)};
        throw Finish{
            wrong_answer("wrote outside its own buffers, into the guard zones around the reference's buffer '" +
                             p.name + "' (" + counts + ") " + where,
                         when_timed)};
      }
    }
    for (std::size_t i = 0; i < scratch_.size(); ++i) {
      const auto [before, after] = guard_damage(scratch_[i], where);
      if (before + after == 0) continue;
      throw Finish{wrong_answer("wrote outside scratch buffer '" + cand_.resolved.scratch[i].name + "' (" +
                                    std::to_string(before) + " bytes before its start, " + std::to_string(after) +
                                    " after its end) " + where,
                                when_timed)};
    }
  }

  // ---- correctness trials -------------------------------------------------------------------------
  // The check sizes, then the timing sizes: last, so their buffers stay allocated for timing.
  std::vector<Sizes> all_size_sets() const {
    std::vector<Sizes> size_sets = task_.check_sizes;
    size_sets.push_back(task_.sizes);
    return size_sets;
  }

  // The host copies of one size set's trials: the inputs drawn, and what each side wrote.
  struct TrialBuffers {
    std::vector<std::vector<unsigned char>> host, cand_out, ref_out;  // by parameter
    explicit TrialBuffers(std::size_t params) : host(params), cand_out(params), ref_out(params) {}
    void clear_answers() {  // no answer stays in host memory a device could read
      for (auto* v : {&cand_out, &ref_out})
        for (auto& b : *v) std::fill(b.begin(), b.end(), 0);
    }
  };

  // Every size set, each with the task's trials: inputs drawn, the candidate run and read back, the
  // reference run and read back, the outputs compared. The first wrong answer ends the evaluation.
  EvaluationReply check_trials() {
    std::uint64_t trial_no = 0;
    int trials_run = 0;
    for (const Sizes& sizes : all_size_sets()) {
      allocate(sizes);
      build_args(ref_, sizes);
      build_args(cand_, sizes);
      TrialBuffers b(task_.params.size());
      for (int trial = 0; trial < task_.trials; ++trial) {
        const auto trial_start = d_.host_now();
        const std::uint64_t seed = trial_seed(base_seed_, trial_no++);
        const std::string where = "(trial " + std::to_string(trial + 1) + ", sizes " + sizes_text(sizes) + ")";
        draw_inputs(sizes, seed, b.host);
        run_candidate_trial(b, seed, where);  // the candidate first: nothing in memory holds this trial's answer yet
        run_reference_trial(b, seed, where);
        ++trials_run;
        compare_trial(sizes, b, where, trials_run);
        trial_seconds_ = std::chrono::duration<double>(d_.host_now() - trial_start).count();  // the timing sizes' last
      }
      b.clear_answers();
    }
    trials_run_ = trials_run;
    EvaluationReply r = verdict_reply(Verdict::correct, "");
    r.trials = trials_run;
    r.device = d_.device_name();
    return r;
  }

  // A trial's inputs, drawn on the host as correctness_inputs.hpp says (the verifier draws the same).
  void draw_inputs(const Sizes& sizes, std::uint64_t seed, std::vector<std::vector<unsigned char>>& host) const {
    for (std::size_t i = 0; i < task_.params.size(); ++i) {
      const Param& p = task_.params[i];
      if (!is_input(p)) continue;
      const std::size_t n = element_count(p, sizes);
      host[i].assign(n * dtype_size(p.dtype), 0);
      draw_input(p, sizes, trial_seed(seed, i), host[i].data(), n);
    }
  }

  // The candidate on the trial's inputs, its buffers read back; an input it changed is a wrong answer.
  void run_candidate_trial(TrialBuffers& b, std::uint64_t seed, const std::string& where) {
    stage_(stage::candidate);
    prepare_from_host(cand_, b.host, seed);
    std::size_t failed = 0;
    if (DeviceStatus rc = launch_all(*cand_.args, failed); rc != k_device_ok)
      candidate_failed(rc, where + in_kernel(*cand_.args, failed));
    if (DeviceStatus rc = d_.synchronize(); rc != k_device_ok) candidate_failed(rc, where);
    stage_(stage::check);
    for (std::size_t i = 0; i < task_.params.size(); ++i) {
      const Param& p = task_.params[i];
      if (p.kind != ParamKind::buffer) continue;
      download(cand_.buffers[i], b.cand_out[i], where, true);
      if (p.role == Role::in && b.cand_out[i] != b.host[i])
        throw Finish{wrong_answer("modified its input '" + p.name + "' " + where, false)};
    }
    check_guards(where, false);
  }

  // The reference on the same inputs; its outputs read back, then poisoned on the device so the
  // answer does not linger where a later run could find it.
  void run_reference_trial(TrialBuffers& b, std::uint64_t seed, const std::string& where) {
    stage_(stage::reference);
    prepare_from_host(ref_, b.host, seed);
    std::size_t ref_failed = 0;
    check(launch_all(*ref_.args, ref_failed), "the reference kernel failed " + where);
    check(d_.synchronize(), "the reference kernel failed " + where);
    stage_(stage::check);
    for (std::size_t i = 0; i < task_.params.size(); ++i) {
      const Param& p = task_.params[i];
      if (!is_output(p)) continue;
      download(ref_.buffers[i], b.ref_out[i], where, false);
      poison(p, ref_.buffers[i], seed);
    }
    check(d_.synchronize(), "poisoning the reference's outputs");
  }

  // Each output within the task's tolerance of the reference's, or a wrong answer naming the first
  // element that is not.
  void compare_trial(const Sizes& sizes, const TrialBuffers& b, const std::string& where, int trials_run) const {
    for (std::size_t i = 0; i < task_.params.size(); ++i) {
      const Param& p = task_.params[i];
      if (!is_output(p)) continue;
      const std::size_t n = element_count(p, sizes);
      const Comparison c = compare(p.dtype, b.cand_out[i].data(), b.ref_out[i].data(), n, task_.tolerance_for(p.dtype));
      if (!c.ok) {
        EvaluationReply r = wrong_answer(describe(c, p.name, n) + " " + where, false);
        r.trials = trials_run;
        r.mismatch = Mismatch{c.first_index, c.first_expected, c.first_actual, c.max_abs_error, c.max_rel_error};
        throw Finish{r};
      }
    }
  }

  // ---- timing -------------------------------------------------------------------------------------

  // Seeds of the warm-up's and the timed runs' inputs: the request's seed mixed with OS randomness
  // drawn once per evaluation, so knowing the request (the loop example fixes its seed) tells no one
  // a timed run's inputs. The correctness trials stay reproducible from the request's seed alone.
  enum class Draw : std::uint64_t { warm_up = 1, timed = 2 };
  std::uint64_t timing_seed(Draw draw, std::uint64_t n) const {
    return trial_seed(trial_seed(timing_secret_, static_cast<std::uint64_t>(draw)), n);
  }

  // Runs of one plan back to back in doubling batches until k_warmup_gpu_ms of GPU time.
  WarmUpReport warm_up(Side& side) {
    LaunchArgs& a = *side.args;
    stage_(stage::warmup(side.name));
    prepare_on_device(side, timing_seed(Draw::warm_up, side.warm_up_draw));
    check(d_.synchronize(), "preparing the warm-up");
    double gpu_ms = 0.0;
    int launches = 0;
    const auto wall_cap = warm_up_wall_cap(d_.host_now());
    for (int batch = 1; launches < k_max_warmup_launches; batch = std::min(batch * 2, 256)) {
      check(d_.record_start(), "recording the warm-up's start event");
      for (int k = 0; k < batch; ++k) {
        // a run is a run: no scratch survives it
        if (side.candidate)
          poison_scratch(
              timing_seed(Draw::warm_up, k_first_warm_up_scratch_draw + static_cast<std::uint64_t>(launches + k)),
              "(warm-up run)");
        std::size_t failed = 0;
        if (DeviceStatus rc = launch_all(a, failed); rc != k_device_ok) {
          if (side.candidate) candidate_failed(rc, "(warm-up run)" + in_kernel(a, failed));
          harness(rc, "the reference failed in warm-up");
        }
      }
      // The stop event, like the synchronisation, may be the call that reports a launch's fault.
      DeviceStatus rc = d_.record_stop();
      if (rc == k_device_ok) rc = d_.synchronize();
      if (rc != k_device_ok) {
        if (side.candidate) candidate_failed(rc, "(warm-up run)");
        harness(rc, "the reference failed in warm-up");
      }
      double ms = 0.0;
      check(d_.elapsed_ms(ms), "reading the warm-up's events");
      gpu_ms += ms;
      launches += batch;
      if (launches >= task_.timing.warmup && (gpu_ms >= k_warmup_gpu_ms || d_.host_now() > wall_cap)) break;
    }
    return {launches, gpu_ms};
  }

  // Where a side's warm-up stops at the latest, whatever GPU time it reached: an eighth of the
  // evaluation's share of the time limit from the warm-up's own start, and never more than a quarter
  // of what is left. Counted from the warm-up, not the evaluation's start, so correctness trials
  // that took a long time do not starve it (a big task would get a handful of launches on an idle
  // clock).
  Clock::time_point warm_up_wall_cap(Clock::time_point now) const {
    if (now >= deadline_) return now;
    return now + std::min((deadline_ - start_) / 8, (deadline_ - now) / 4);
  }

  // One timed run: fresh inputs (the same for both sides of run `rep`) and poisoned outputs (and
  // scratch), caches flushed, then only the plan's launches inside the events (and the external id
  // that ties CUPTI's records to them).
  void timed_run(int rep, Side& side) {
    LaunchArgs& a = *side.args;
    stage_(stage::timing(side.name));
    prepare_on_device(side, timing_seed(Draw::timed, static_cast<std::uint64_t>(rep)));
    check(d_.flush_caches(), "flushing the caches");
    check(d_.synchronize(), "preparing a timed run");
    static std::atomic<std::uint64_t> next_id{1};
    RunWindow w;
    w.external_id = next_id++;
    w.kernels = a.kernels.size();
    check(d_.push_external_id(w.external_id), "pushing the external correlation id");
    w.t0 = d_.activity_timestamp_ns();
    const auto wall0 = d_.host_now();
    check(d_.record_start(), "recording the start event");
    std::size_t failed = 0;
    DeviceStatus rc = launch_all(a, failed);
    if (rc == k_device_ok) rc = d_.record_stop();
    if (rc == k_device_ok) rc = d_.synchronize();
    const auto wall1 = d_.host_now();
    w.t1 = d_.activity_timestamp_ns();
    check(d_.pop_external_id(), "popping the external correlation id");
    if (rc != k_device_ok) {
      if (side.candidate) candidate_failed(rc, "(timed run " + std::to_string(rep + 1) + ")" + in_kernel(a, failed));
      harness(rc, "the reference failed while timed");
    }
    double ms = 0.0;
    check(d_.elapsed_ms(ms), "reading the timed run's events");
    side.series.windows.push_back(w);
    side.series.event_ms.push_back(ms);
    side.series.wall_ms.push_back(std::chrono::duration<double, std::milli>(wall1 - wall0).count());
  }

  // Timed run `rep` answers for itself: after both sides ran on the same inputs (the reference's
  // drawn afresh after the candidate's run, so nothing the candidate wrote survives into them), the
  // candidate's outputs are compared with the reference's and its inputs with the reference's
  // untouched copy, on the device, outside every timed window. Every run gets exactly this work,
  // whatever it holds, so nothing a kernel can observe tells it which run counts.
  void check_timed_run(int rep) {
    stage_(stage::check);
    const std::string where = "(timed run " + std::to_string(rep + 1) + ")";
    const DevBuf& rec = compare_records_.front();
    const std::vector<CompareRecord> fresh(task_.params.size());
    check(d_.upload(rec.ptr, fresh.data(), rec.bytes), "resetting the comparison records");
    for (std::size_t i = 0; i < task_.params.size(); ++i) {
      const Param& p = task_.params[i];
      if (p.kind != ParamKind::buffer) continue;
      const bool input = p.role == Role::in;
      check(d_.compare_on_device(cand_.buffers[i].ptr, ref_.buffers[i].ptr, p.dtype,
                                 cand_.buffers[i].bytes / dtype_size(p.dtype), task_.tolerance_for(p.dtype), input,
                                 rec.ptr + i * sizeof(CompareRecord)),
            "comparing a timed run's '" + p.name + "' on the device");
    }
    check(d_.synchronize(), "comparing a timed run's buffers on the device");
    std::vector<CompareRecord> records(task_.params.size());
    check(d_.download(records.data(), rec.ptr, rec.bytes), "reading the comparison records");
    for (int pass = 0; pass < 2; ++pass) {  // a modified input first: it explains any output
      for (std::size_t i = 0; i < task_.params.size(); ++i) {
        const Param& p = task_.params[i];
        const CompareRecord& r = records[i];
        if (p.kind != ParamKind::buffer || (p.role == Role::in) != (pass == 0) || r.mismatches == 0) continue;
        const std::size_t n = cand_.buffers[i].bytes / dtype_size(p.dtype);
        if (pass == 0)
          throw Finish{wrong_answer("modified its input '" + p.name + "' when timed " + where + ": " +
                                        std::to_string(r.mismatches) + " of " + std::to_string(n) +
                                        " elements changed, first at [" + std::to_string(r.first_index) + "]",
                                    true)};
        EvaluationReply reply = wrong_answer("the kernel gave a different result when timed " + where + ": " + p.name +
                                                 ": " + std::to_string(r.mismatches) + " of " + std::to_string(n) +
                                                 " elements differ; first at [" + std::to_string(r.first_index) + "]",
                                             true);
        reply.trials = trials_run_;
        reply.timed_run = rep + 1;
        throw Finish{reply};
      }
    }
  }

  // Timing as three steps: prepare (a fresh candidate module, its arguments, both warm-ups), the
  // timed runs until the stopping rule, a budget or the deadline ends them, then the report.
  TimingReport time_and_check() {
    const auto [warmup_candidate, warmup_reference] = prepare_timing();
    const TimedRuns runs = run_timed_until_steady();
    // The guards, after the last timed run and outside every window: damage persists, so one look
    // covers every run.
    stage_(stage::check);
    check_guards("while timed", true);
    TimingReport timing = summarise(runs.reps);
    timing.warmup_candidate = warmup_candidate;
    timing.warmup_reference = warmup_reference;
    timing.warmup_min_gpu_ms = k_warmup_gpu_ms;
    timing.checked_runs = runs.reps;  // every one, on the device
    apply_floor(timing);
    if (!runs.stopped.empty()) {
      timing.stopped_early = runs.stopped;
      timing.note = (timing.note.empty() ? std::string() : timing.note + "; ") + "timed " + std::to_string(runs.reps) +
                    " of the minimum " + std::to_string(task_.timing.min_reps) + " runs: " + runs.stopped;
    }
    return timing;
  }

  // A fresh secret for the timed inputs, the candidate's module reloaded (its __device__ globals do not
  // survive into timing), the launch arguments built before any timed run, and both sides warmed up.
  std::pair<WarmUpReport, WarmUpReport> prepare_timing() {
    std::random_device os_random;
    timing_secret_ = trial_seed(base_seed_, (std::uint64_t{os_random()} << 32) ^ os_random());
    stage_(stage::reload);
    if (!unload(cand_.module)) throw Finish{harness_error("unloading the candidate's module failed")};
    load_candidate();
    build_args(cand_, task_.sizes);
    compare_records_.assign(1, guarded_buffer(task_.params.size() * sizeof(CompareRecord), "the comparison records"));
    WarmUpReport candidate = warm_up(cand_);
    WarmUpReport reference = warm_up(ref_);
    d_.activity_reset();
    return {candidate, reference};
  }

  struct TimedRuns {
    int reps = 0;
    std::string stopped;  // why fewer than min_reps ran; empty otherwise
  };

  // Run pairs, candidate first as in the trials (nothing in memory holds a run's answer yet), each
  // checked on the device, until both sides are steady, the timing budget is spent or the task's
  // time limit leaves no room for another pair.
  TimedRuns run_timed_until_steady() {
    const TimingSettings& ts = task_.timing;
    cand_.series = {};
    ref_.series = {};
    harvested_.clear();
    harvested_reps_ = 0;
    dropped_records_ = 0;
    harvest_problems_.clear();
    stopping_by_cupti_ = d_.activity_enabled();
    int next_cupti_check = ts.min_reps;
    TimedRuns runs;
    double gpu_ms_used = 0.0, slowest_rep_s = 0.0;
    for (int rep = 0; rep < ts.max_reps; ++rep) {
      const auto rep0 = d_.host_now();
      for (Side* side : {&cand_, &ref_}) {
        timed_run(rep, *side);
        gpu_ms_used += side->series.event_ms.back();
      }
      check_timed_run(rep);
      runs.reps = rep + 1;
      slowest_rep_s = std::max(slowest_rep_s, std::chrono::duration<double>(d_.host_now() - rep0).count());
      if (steady(runs.reps, next_cupti_check)) break;
      if (gpu_ms_used > 2.0 * ts.budget_ms) {  // both kernels' timed GPU time against both budgets
        if (runs.reps < ts.min_reps)
          runs.stopped = "the timing budget of " + std::to_string(ts.budget_ms) + " ms per kernel ran out";
        break;
      }
      // Room for one more run pair and its check, with margin (about three run pairs' worth).
      const auto need = std::chrono::duration<double>(4.0 * slowest_rep_s);
      if (d_.host_now() + std::chrono::duration_cast<Clock::duration>(need) > deadline_) {
        if (runs.reps < ts.min_reps) runs.stopped = "the task's time limit left room for no more runs";
        break;
      }
    }
    return runs;
  }

  // The stopping rule: both sides' spreads at most the target once min_reps ran. Read from CUPTI's
  // durations while CUPTI times every run (CUDA events carry the host's launch jitter, which keeps a
  // short kernel from ever looking steady): those are harvested at checkpoints, min_reps and then
  // every quarter more runs, since a harvest costs a flush. Events otherwise, every run.
  bool steady(int reps, int& next_cupti_check) {
    const TimingSettings& ts = task_.timing;
    if (reps < ts.min_reps) return false;
    const auto within = [&](const std::vector<double>& ms) { return timing_statistics(ms).spread <= ts.target_spread; };
    if (stopping_by_cupti_) {
      if (reps < next_cupti_check) return false;
      next_cupti_check = reps + std::max(1, reps / 4);
      harvest_up_to(reps);
      const bool by_id = records_carry_ids(harvested_);
      const std::optional<std::vector<double>> cand = cupti_durations(cand_, by_id), ref = cupti_durations(ref_, by_id);
      if (cand && ref) return within(*cand) && within(*ref);
      stopping_by_cupti_ = false;  // CUPTI missed a run: events decide from here on
    }
    return within(cand_.series.event_ms) && within(ref_.series.event_ms);
  }

  // The records of every timed run not harvested yet, added to those kept.
  void harvest_up_to(int reps) {
    if (!d_.activity_enabled() || reps <= harvested_reps_) return;
    std::vector<RunWindow> runs;
    for (const Side* side : {&cand_, &ref_}) {
      for (int i = harvested_reps_; i < reps; ++i) runs.push_back(side->series.windows.at(static_cast<std::size_t>(i)));
    }
    ActivityHarvest h = d_.harvest_runs(runs);
    harvested_.insert(harvested_.end(), h.kernels.begin(), h.kernels.end());
    dropped_records_ += h.dropped;
    if (!h.problem.empty() && harvest_problems_.find(h.problem) == std::string::npos)
      harvest_problems_ += (harvest_problems_.empty() ? "" : "; ") + h.problem;
    harvested_reps_ = reps;
  }

  // A side's runs timed by CUPTI, or nothing when any run lacks a record of one of its kernels (from
  // the others alone, a plan would be paid for the kernels whose records went missing).
  std::optional<std::vector<double>> cupti_durations(const Side& side, bool by_id) const {
    std::vector<double> ms;
    for (const RunWindow& w : side.series.windows) {
      const RunRecords r = records_of_run(harvested_, w, by_id);
      if (!r.complete(w)) return std::nullopt;
      ms.push_back(r.ms());
    }
    return ms;
  }

  // The physical floor (timing_floor.hpp): the candidate's fastest run against the time its inputs
  // take to read at the device's peak bandwidth. Below it, the timing is flagged and not paid.
  void apply_floor(TimingReport& timing) const {
    const std::optional<TimingFloor> floor =
        timing_floor(bytes_read_at_least(task_, task_.sizes), d_.peak_memory_bandwidth());
    if (!floor) return;
    timing.floor = FloorReport{floor->bytes, floor->bandwidth, k_floor_headroom, floor->floor_ms};
    const double fastest = timing.candidate.min_ms;
    if (!(fastest < floor->floor_ms)) return;
    timing.below_floor = "the candidate's fastest timed run took " + std::to_string(fastest) + " ms, less than the " +
                         std::to_string(floor->floor_ms) + " ms needed to read its inputs' " +
                         std::to_string(floor->bytes) + " bytes once at the device's peak of " +
                         std::to_string(floor->bandwidth / 1e9) + " GB/s (with " + std::to_string(k_floor_headroom) +
                         "x headroom); the timing is not paid";
  }

  // CUPTI durations by external id (by time window where records carry none); events where CUPTI
  // is off, lost records, or missed a run.
  TimingReport summarise(int reps) {
    const Side* sides[2] = {&cand_, &ref_};
    std::string note = d_.activity_note();
    auto add_note = [&](const std::string& n) { note += (note.empty() ? "" : "; ") + n; };
    std::vector<double> cupti_ms[2];
    bool cupti = d_.activity_enabled();
    std::size_t dropped = 0, by_id_runs = 0, by_window_runs = 0;  // runs whose records were found each way
    if (cupti) {
      harvest_up_to(reps);
      dropped = dropped_records_;
      if (!harvest_problems_.empty()) add_note(harvest_problems_);
      if (dropped > 0) add_note("CUPTI dropped " + std::to_string(dropped) + " activity records");
      // Records with external ids: a run whose record is missing is missing (another kernel in its
      // time window is not its stand-in). Without ids: every kernel that started in the window.
      // A run is timed by CUPTI only with a record of every kernel of its plan: from the others
      // alone, a plan would be paid for the kernels whose records went missing.
      const bool by_id = records_carry_ids(harvested_);
      if (!by_id && !harvested_.empty())
        add_note("no CUPTI kernel record carried an external id; runs matched by time window");
      for (int which = 0; which < 2 && cupti; ++which) {
        for (const RunWindow& w : sides[which]->series.windows) {
          const RunRecords r = records_of_run(harvested_, w, by_id);
          if (!r.complete(w)) {
            cupti = false;
            add_note(r.records == 0 ? "CUPTI delivered no kernel record for a timed run; CUDA events used"
                                    : "CUPTI delivered " + std::to_string(r.records) + " of a timed run's " +
                                          std::to_string(w.kernels) + " kernel records; CUDA events used");
            break;
          }
          cupti_ms[which].push_back(r.ms());
          ++(by_id ? by_id_runs : by_window_runs);
        }
      }
    }
    if (!cupti) by_id_runs = by_window_runs = 0;  // events timed every run: CUPTI matched none that counts
    TimingReport timing;
    timing.method = cupti ? TimingMethod::cupti : TimingMethod::events;
    timing.stopping_rule_source = cupti && stopping_by_cupti_ ? TimingMethod::cupti : TimingMethod::events;
    timing.dropped_records = dropped;
    timing.reps = reps;
    timing.matched_by_id = by_id_runs;
    timing.matched_by_window = by_window_runs;
    timing.note = note;
    const auto side = [&](int which) {
      const Series& series = sides[which]->series;
      const TimingStatistics s = timing_statistics(cupti ? cupti_ms[which] : series.event_ms);
      SideTiming k;
      k.median_ms = s.median;
      k.p25_ms = s.p25;
      k.p75_ms = s.p75;
      k.min_ms = s.min;
      k.spread = s.spread;
      k.runs = series.event_ms.size();
      k.events_median_ms = timing_statistics(series.event_ms).median;
      k.wall_median_ms = timing_statistics(series.wall_ms).median;
      if (cupti) k.cupti_median_ms = timing_statistics(cupti_ms[which]).median;
      return k;
    };
    timing.candidate = side(0);
    timing.reference = side(1);
    return timing;
  }

  GpuDriver& d_;
  const StageFn& stage_;
  Clock::time_point start_, deadline_;
  TaskSpec task_;
  std::uint64_t base_seed_ = 1;
  std::uint64_t timing_secret_ = 0;  // the request's seed mixed with OS randomness (timing_seed)
  bool time_ = true;
  Side cand_{true, stage::candidate, 0}, ref_{false, stage::reference, 1};
  bool declared_plan_ = false;
  std::string plan_error_;
  std::vector<DevBuf> scratch_;          // the candidate's, by its plan's scratch declarations
  std::vector<DevBuf> compare_records_;  // one CompareRecord per task parameter, while timing
  int trials_run_ = 0;
  double trial_seconds_ = 0.0;
  // CUPTI's records of the timed runs, harvested as timing goes (harvest_up_to): the first
  // harvested_reps_ run pairs' are in harvested_.
  std::vector<KernelActivity> harvested_;
  int harvested_reps_ = 0;
  std::size_t dropped_records_ = 0;
  std::string harvest_problems_;
  bool stopping_by_cupti_ = false;  // the stopping rule reads CUPTI's durations (steady())
  bool cleaned_ = false, clean_ok_ = true;
  std::size_t local_bytes_ = 0;
};

}  // namespace

EvaluationReply run_evaluation(const EvaluationRequest& request, GpuDriver& driver, const StageFn& stage) {
  EvaluationRun e(driver, stage, request);
  EvaluationReply reply;
  try {
    reply = e.run();
  } catch (Finish& f) {
    reply = std::move(f.reply);
  }
  reply.local_bytes_per_thread = e.local_bytes_per_thread();
  if (!e.clean_up()) reply.restart = true;  // the next evaluation gets a fresh runner and context
  return reply;
}

EvaluationReply gpu_eval(const nlohmann::json& request, const GpuRunnerConfig& config, const StageFn& stage) {
  static std::unique_ptr<GpuDriver> driver;
  static std::string open_error;
  if (driver == nullptr && open_error.empty()) {
    stage(stage::init);
    driver = open_cuda_driver(config, open_error);
    // The driver, its context and the input generator are up: from here on the runner keeps what it
    // has opened and may open nothing else on the host.
    if (driver != nullptr && config.confine) {
      if (const GpuRunnerConfinement c = confine_gpu_runner(); !c.error.empty()) {
        open_error = "cannot confine the runner: " + c.error;
        driver.reset();
      }
    }
    // The device's draw against the host twin, before anything rests on it (draw_check.hpp).
    if (driver != nullptr) {
      if (const std::string refusal = draw_check_refusal(check_device_draw(*driver)); !refusal.empty()) {
        open_error = refusal;
        driver.reset();
      }
    }
    if (driver != nullptr) stage(stage::ready);
  }
  if (driver == nullptr) return harness_error("GPU initialisation failed: " + open_error);
  return evaluate_under_runner_rules(evaluation_request_from_json(request), *driver, config, stage);
}

}  // namespace leap::sandbox::detail

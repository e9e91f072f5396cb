// SPDX-License-Identifier: Apache-2.0
// sandbox/src/evaluation: a candidate against a task, in five named steps (Evaluator::Impl::evaluate):
// compile it, check its launch plan, compile the reference, then without a GPU stop at the compile's
// verdict, else run, check and time it in the GPU runner. Not here: the task-spec language
// (task_spec/), compiling (compile/, through the Compiler), the confinement layers (confinement/),
// serve's request protocol (serve/).
#include "leap/sandbox/evaluator.hpp"

#include "evaluation/runner_reply.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>

#include "common/bounded_json.hpp"
#include "runner_pipe/evaluation_reply.hpp"
#include "runner_pipe/evaluation_request.hpp"
#include "runner_pipe/runner_stages.hpp"
#include "compile/elf_kernels.hpp"
#include "runner_pipe/frames.hpp"
#include "compile/kernel_diagnostics.hpp"
#include "leap/sandbox/compile_target.hpp"
#include "evaluation/gpu_runner.hpp"

namespace leap::sandbox {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Empty when the module defines the kernel `entry`, else what is missing and what to write. The
// kernels come from the CUBIN's ELF symbol table: text in the PTX, such as an inline-asm comment,
// proves nothing. The scan of the source is charged to the compile's cpu_seconds.
std::string missing_entry(CompileResult& c, std::string_view source, const std::string& entry) {
  if (!c.kernels) return "the compiled module has no readable symbol table";
  return missing_kernel_advice(c, source, "candidate.cu", entry);
}

}  // namespace

std::string_view to_string(EvalStatus status) noexcept {
  switch (status) {
    case EvalStatus::verdict: return "verdict";
    case EvalStatus::no_gpu: return "no_gpu";
    case EvalStatus::error: return "error";
  }
  return "unknown";
}

std::string_view to_string(SpeedupUnknown reason) noexcept {
  switch (reason) {
    case SpeedupUnknown::none: return "none";
    case SpeedupUnknown::not_correct: return "not_correct";
    case SpeedupUnknown::not_requested: return "not_requested";
    case SpeedupUnknown::no_room: return "no_room";
    case SpeedupUnknown::below_floor: return "below_floor";
    case SpeedupUnknown::not_measured: return "not_measured";
  }
  return "unknown";
}

std::string_view to_string(PlanSource source) noexcept {
  switch (source) {
    case PlanSource::task: return "task";
    case PlanSource::candidate: return "candidate";
  }
  return "unknown";
}

std::string first_errors(std::string_view log, int max_lines) {
  std::vector<std::string_view> lines;
  std::size_t pos = 0;
  while (pos < log.size()) {
    std::size_t end = log.find('\n', pos);
    if (end == std::string_view::npos) end = log.size();
    lines.push_back(log.substr(pos, end - pos));
    pos = end + 1;
  }
  std::string out;
  int taken = 0;
  for (std::size_t i = 0; i < lines.size() && taken < max_lines; ++i) {
    if (lines[i].find("error") == std::string_view::npos) continue;  // NVRTC's word: not a protocol key
    // The diagnostic and the source excerpt and caret NVRTC prints under it.
    for (std::size_t k = i; k < lines.size() && k < i + 3 && taken < max_lines; ++k) {
      if (k > i && lines[k].find("): ") != std::string_view::npos) break;
      out.append(lines[k]).push_back('\n');
      ++taken;
    }
  }
  if (out.empty()) out = std::string(log.substr(0, std::min<std::size_t>(log.size(), 1500)));
  return out;
}

struct Evaluator::Impl {
  EvaluatorConfig config;
  GpuStatus gpu;
  std::string arch;
  std::unique_ptr<Compiler> compiler;
  GpuRunner runner;
  std::mutex runner_mutex;
  std::mutex ref_mutex;
  // By task name and source. Only results the source decided (nvrtc_verdict: compiled, or a genuine
  // compile error) are kept: a limit, a killed or dead compile child says nothing about the reference,
  // and kept it would fail every later evaluation of the task in this process.
  std::map<std::string, CompileResult> references;

  explicit Impl(EvaluatorConfig c) : config(std::move(c)), runner(config.gpu_runner) {
    gpu = config.gpu ? *config.gpu : probe_gpu();
    arch = config.arch;
    if (arch.empty()) {
      arch = "sm_90";
      if (gpu.ok() && !gpu.devices.empty()) {
        const DeviceInfo& d =
            gpu.devices[static_cast<std::size_t>(std::max(0, config.gpu_runner.device)) % gpu.devices.size()];
        // The device's architecture-specific target where it has one (compile_target.hpp).
        if (d.cc_major > 0) arch = device_compile_target(d.cc_major, d.cc_minor);
      }
    }
    if (!config.compiler.cache) config.compiler.cache = std::make_shared<CompileCache>(CacheOptions{});
    compiler = std::make_unique<Compiler>(config.compiler);
  }

  CompileResult reference(const TaskSpec& task);
  void run_in_runner(const TaskSpec& task, const CompileResult& ref, Clock::time_point t0, EvalResult& r);
  void evaluate(const TaskSpec& task, std::string_view candidate_source, const std::vector<Header>& headers,
                Clock::time_point t0, EvalResult& r);

  // A task may raise the compile CPU limit where its category needs it (tensor-core GEMMs spend tens of
  // seconds in ptxas); the configured limit stands where it is higher.
  CompileJob job(std::string_view source, const TaskSpec* task = nullptr) const {
    CompileJob j;
    j.source = std::string(source);
    j.options.arch = arch;
    j.options.timeout = config.compile_timeout;
    if (task != nullptr && task->library.compile_cpu_seconds > 0)
      j.options.timeout = std::max<std::chrono::milliseconds>(j.options.timeout,
                                                              std::chrono::seconds(task->library.compile_cpu_limit()));
    j.options.want_ptx = true;
    j.options.want_cubin = true;
    j.file_name = "candidate.cu";
    return j;
  }
};

Evaluator::Evaluator(EvaluatorConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}
Evaluator::~Evaluator() = default;

const GpuStatus& Evaluator::gpu() const noexcept { return impl_->gpu; }
const std::string& Evaluator::arch() const noexcept { return impl_->arch; }
Compiler& Evaluator::compiler() noexcept { return *impl_->compiler; }
GpuRunner& Evaluator::gpu_runner() noexcept { return impl_->runner; }

CompileResult Evaluator::compile(std::string_view source) { return impl_->compiler->compile(impl_->job(source)); }

EvalResult Evaluator::evaluate(const TaskSpec& task, std::string_view candidate_source) {
  return evaluate(task, candidate_source, {});
}

namespace {

void give_verdict(EvalResult& r, Verdict v) {
  r.status = EvalStatus::verdict;
  r.verdict = v;
}

// Step 1's verdict on a compile that failed. A refusal, an error and a timeout are all a
// compile_error, GPU or not; the detail says which, and what to change.
void report_compile_failure(EvalResult& r, const std::string& arch) {
  give_verdict(r, Verdict::compile_error);
  switch (r.compile.status) {
    case CompileStatus::refused: r.detail = r.compile.log; break;
    case CompileStatus::timeout: r.detail = "the compile did not finish within its time limit"; break;
    case CompileStatus::resource_limit:
      r.detail = r.compile.limit == CompileLimit::output_size
                     ? r.compile.log.substr(0, r.compile.log.find('\n'))  // which output, how large, what to change
                     : "the compile ran out of memory (address-space limit)";
      break;
    default: r.detail = first_errors(r.compile.log); break;
  }
  if (const std::string advice = arch_specific_advice(r.compile.log, arch); !advice.empty()) r.detail += "\n" + advice;
  r.feedback = "Compile error:\n" + r.detail;
}

void report_plan_failure(EvalResult& r, const LaunchPlanReport& plan) {
  give_verdict(r, Verdict::compile_error);
  r.detail = "launch plan: " + plan.error;
  r.feedback = (plan.status == PlanStatus::refused ? "Launch plan refused: " : "Launch plan error: ") + plan.error;
}

// Step 2: the launch plan, the candidate's (parsed and checked: kernels against the module's symbol
// table, arguments against the kernels' parameters in the CUBIN, every limit at every size set) or
// else the task's own, whose arguments are checked the same way. False when the evaluation ends here.
bool check_launch_plan(const TaskSpec& task, std::string_view candidate_source, EvalResult& r) {
  const PlanParse parsed = parse_launch_plan(candidate_source);
  const std::optional<KernelParams> cand_params = detail::cubin_kernel_params(r.compile.cubin);
  const PlanContext cand_context{r.compile.kernels ? &*r.compile.kernels : nullptr, 0,
                                 cand_params ? &*cand_params : nullptr};
  LaunchPlanReport& plan = r.launch_plan.emplace();
  plan.sizes = task.sizes;
  if (!parsed.ok() || !parsed.plan.empty()) {
    plan.source = PlanSource::candidate;
    plan.plan = parsed.plan;
    PlanCheck check;
    if (!parsed.ok()) {
      check.status = task.candidate_launch.allowed ? PlanStatus::invalid : PlanStatus::refused;
      check.error = task.candidate_launch.allowed ? parsed.error : check_candidate_plan(parsed.plan, task).error;
    } else if (!r.compile.kernels && task.candidate_launch.allowed) {
      check.status = PlanStatus::invalid;
      check.error = "the compiled module has no readable symbol table";
    } else {
      check = check_candidate_plan(parsed.plan, task, cand_context);
    }
    plan.status = check.status;
    plan.error = check.error;
    plan.resolved = std::move(check.resolved);
    if (plan.status != PlanStatus::ok) {
      report_plan_failure(r, plan);
      return false;
    }
    return true;
  }
  plan.plan = task_launch_plan(task);
  if (std::string missing = missing_entry(r.compile, candidate_source, task.entry); !missing.empty()) {
    give_verdict(r, Verdict::compile_error);
    r.detail = missing;
    r.feedback = "Compile error: " + r.detail;
    return false;
  }
  try {
    plan.resolved = resolve_launch_plan(plan.plan, task, task.sizes, k_task_launch_bounds, cand_context);
  } catch (const LaunchPlanError& e) {
    plan.status = PlanStatus::invalid;
    plan.error = e.what();
    report_plan_failure(r, plan);
    return false;
  }
  return true;
}

// Step 3's check of a compiled reference: it defines the entry and takes the task's parameters, or
// every launch of it would read arguments that are not there. Empty when it does, else the error.
std::string reference_problem(const TaskSpec& task, CompileResult& ref) {
  if (!ref.ok() || !missing_entry(ref, task.reference_source, task.entry).empty())
    return "the task's reference kernel does not compile or lacks '" + task.entry + "': " + first_errors(ref.log, 6);
  try {
    const std::optional<KernelParams> ref_params = detail::cubin_kernel_params(ref.cubin);
    const KernelParams none;
    resolve_launch_plan(task_launch_plan(task), task, task.sizes, k_task_launch_bounds,
                        {nullptr, 0, ref_params ? &*ref_params : &none});
  } catch (const LaunchPlanError& e) {
    return std::string("the task's reference kernel does not take the task's parameters: ") + e.what();
  }
  return "";
}

// Step 4 without a GPU: the compile verdict was real; anything further would be made up.
void report_no_gpu(EvalResult& r, const GpuStatus& gpu, const std::string& arch) {
  r.status = EvalStatus::no_gpu;
  r.detail = "compiled for " + arch + "; running it needs a GPU (" + std::string(to_string(gpu.state)) +
             (gpu.reason.empty() ? "" : ": " + gpu.reason) + ")";
  r.feedback = r.launch_plan->source == PlanSource::candidate
                   ? "The kernel compiles and its launch plan is valid (" + to_text(*r.launch_plan->resolved) +
                         "). It was not run: no GPU is available."
                   : "The kernel compiles. It was not run: no GPU is available.";
}

// Step 5's reading of the runner's call: a timeout or a death while the candidate ran is the
// candidate's verdict; anything else that went wrong is the sandbox's error.
void report_call(const TaskSpec& task, const CallResult& call, const std::optional<detail::EvaluationReply>& reply,
                 const std::string& malformed, EvalResult& r) {
  const bool in_candidate = detail::stage::is_candidate_stage(call.last_stage);
  if (call.status == CallStatus::timeout) {
    if (in_candidate) {
      give_verdict(r, Verdict::timeout);
      r.detail = "the kernel did not finish within the task's time limit of " + std::to_string(task.time_limit_ms) +
                 " ms (" + call.last_stage + ")";
      r.feedback = "Timeout: " + r.detail + ". Look for a loop that never ends or a barrier not every thread reaches.";
    } else {
      r.status = EvalStatus::error;
      r.error = "the runner timed out outside the candidate's runs: " + call.detail;
    }
  } else if (call.status == CallStatus::died && in_candidate) {
    give_verdict(r, Verdict::runtime_error);
    r.cuda_error = "GPU_RUNNER_DIED";
    r.detail = "the evaluation process died while running the candidate: " + call.detail;
    r.feedback = "Runtime error: " + r.detail;
  } else if (call.status != CallStatus::ok) {
    r.status = EvalStatus::error;
    r.error = "GPU runner " + std::string(to_string(call.status)) + ": " + call.detail;
  } else if (!reply) {
    r.status = EvalStatus::error;
    r.error = "malformed runner reply: " + malformed;
  } else {
    detail::read_runner_reply(*reply, r);
  }
}

}  // namespace

// Step 3: the reference, compiled once per task and source; a reference that does not build is the
// task's fault, not the candidate's.
CompileResult Evaluator::Impl::reference(const TaskSpec& task) {
  std::lock_guard lock(ref_mutex);
  const std::string key = task.name + "\n" + task.reference_source;
  if (const auto it = references.find(key); it != references.end()) return it->second;
  CompileResult ref = compiler->compile(job(task.reference_source, &task));
  if (ref.nvrtc_verdict) references.emplace(key, ref);
  return ref;
}

// Step 5: run, check and time in the runner, and read its reply.
void Evaluator::Impl::run_in_runner(const TaskSpec& task, const CompileResult& ref, Clock::time_point t0,
                                    EvalResult& r) {
  r.seed = config.seed
               ? *config.seed
               : std::random_device{}() * 0x100000001ULL ^ static_cast<std::uint64_t>(t0.time_since_epoch().count());
  detail::EvaluationRequest request;
  request.task = task_to_json(task);
  request.candidate = r.compile.cubin;
  request.reference = ref.cubin;
  request.seed = r.seed;
  request.time = config.time;
  if (r.launch_plan->source == PlanSource::candidate) request.plan = to_directives(r.launch_plan->plan);
  const std::vector<std::uint8_t> bytes = json::to_cbor(detail::to_json(request));
  CallResult call;
  // The runner's reply, read once; a reply that cannot be read is reported as malformed.
  std::optional<detail::EvaluationReply> reply;
  std::string malformed;
  // The device heap outlives the module that used it: read from the candidate's PTX before the lock,
  // so no scan of the candidate's text holds up the evaluations waiting for the runner.
  const bool uses_device_heap = detail::references_device_malloc(r.compile.ptx);
  {
    std::lock_guard lock(runner_mutex);
    call = runner.call(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                       std::chrono::milliseconds(task.time_limit_ms));
    // A module that used the device heap, and a sticky error in the context: either way the next
    // evaluation gets a fresh runner. Decided under the same lock as the call.
    bool restart = uses_device_heap;
    if (call.status == CallStatus::ok) {
      try {
        reply = detail::evaluation_reply_from_json(detail::decode_bounded_cbor(call.reply, detail::k_frame_limits));
        restart = restart || reply->restart;
      } catch (const std::exception& e) {
        malformed = e.what();
        restart = true;
      }
    }
    if (restart) runner.restart_next();
  }
  report_call(task, call, reply, malformed, r);
}

// The steps in order; each that ends the evaluation has filled `r` with why.
void Evaluator::Impl::evaluate(const TaskSpec& task, std::string_view candidate_source,
                               const std::vector<Header>& headers, Clock::time_point t0, EvalResult& r) {
  // 1. Compile the candidate.
  CompileJob cand_job = job(candidate_source, &task);
  cand_job.headers = headers;
  r.compile = compiler->compile(cand_job);
  if (!r.compile.ok()) return report_compile_failure(r, arch);
  // 2. Its launch plan, or the task's.
  if (!check_launch_plan(task, candidate_source, r)) return;
  // 3. The reference.
  CompileResult ref = reference(task);
  if (std::string problem = reference_problem(task, ref); !problem.empty()) {
    r.status = EvalStatus::error;
    r.error = std::move(problem);
    return;
  }
  // 4. A GPU, or the compile's verdict alone.
  if (!gpu.ok()) return report_no_gpu(r, gpu, arch);
  // 5. Run, check and time.
  run_in_runner(task, ref, t0, r);
}

EvalResult Evaluator::evaluate(const TaskSpec& task, std::string_view candidate_source,
                               const std::vector<Header>& headers) {
  validate(task);
  const auto t0 = Clock::now();
  EvalResult r;
  impl_->evaluate(task, candidate_source, headers, t0, r);
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

}  // namespace leap::sandbox

// SPDX-License-Identifier: Apache-2.0
// leap-sandbox tasks measure: on a GPU, each task's reference at its full timing sizes checked against
// its oracle and timed (sandbox/src/verify/measure_task.hpp). The oracles (double precision, on the
// host) are the slow half: worker threads draw the trials and run them, the longest first and within
// a memory budget, while this thread owns the device (the CUDA context is current on it) and runs
// each reference as soon as its oracle is ready. The references and oracles are the project's own:
// they run in this process, unconfined; a candidate never comes here.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include <leap/sandbox/builtin_tasks.hpp>
#include <leap/sandbox/compile_target.hpp>
#include <leap/sandbox/driver_probe.hpp>

#include "cli.hpp"
#include "cmd_tasks.hpp"
#include "evaluation/cuda_driver.hpp"
#include "verify/measure_task.hpp"
#include "verify/nvrtc_check.hpp"
#include "verify/verify_task.hpp"

namespace leap_cli {
namespace {

namespace sb = leap::sandbox;
namespace vf = leap::sandbox::verify;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct MeasureArgs {
  std::vector<std::string> names;  // empty: every built-in task
  bool as_json = false;
  std::string json_file;
  unsigned jobs = 0;  // oracle threads; 0: one per hardware thread
  std::string cache_dir;
  int device = 0;
  std::string arch;
  double max_seconds = 0;     // 0: no limit
  double memory_gib = 0;      // 0: half the machine's memory
  bool oracles_only = false;  // the host half alone, no device: how long a GPU run's oracles will take
  vf::MeasureOptions options;
};

MeasureArgs parse_measure_args(const Arguments& args) {
  MeasureArgs m;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") m.as_json = true;
    else if (a == "--json-file") m.json_file = option_value(args, i);
    else if (a == "--no-time") m.options.time = false;
    else if (a == "--oracles-only") m.oracles_only = true;
    else if (a == "-j" || a == "--jobs") m.jobs = static_cast<unsigned>(parse_number(a, option_value(args, i), 1, 256));
    else if (a == "--cache-dir") m.cache_dir = option_value(args, i);
    else if (a == "--device") m.device = static_cast<int>(parse_number(a, option_value(args, i), 0, 63));
    else if (a == "--arch") m.arch = option_value(args, i);
    else if (a == "--max-seconds")
      m.max_seconds = static_cast<double>(parse_number(a, option_value(args, i), 1, 86400));
    else if (a == "--memory-gib")
      m.memory_gib = static_cast<double>(parse_number(a, option_value(args, i), 1, 1 << 20));
    else if (a == "--seed")
      m.options.seed = static_cast<std::uint64_t>(parse_number(a, option_value(args, i), 0, 1L << 62));
    else if (!a.empty() && a[0] == '-') usage_error("tasks measure: unknown option '" + a + "'");
    else m.names.push_back(a);
  }
  if (m.cache_dir.empty()) m.cache_dir = default_verify_cache_dir();
  if (m.jobs == 0) m.jobs = std::max(1u, std::thread::hardware_concurrency());
  if (m.memory_gib == 0) {
    const double bytes = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
    m.memory_gib = std::max(1.0, bytes / 2 / (1 << 30));
  }
  return m;
}

// One task to measure: its target, or why it could not be loaded.
struct Job {
  std::optional<vf::VerifyTarget> target;
  std::string name, load_error;
  double host_bytes = 0;   // what its trial and oracle hold on the host, estimated from its buffers
  double oracle_cost = 0;  // flops + 16 x bytes: what a host thread's time for its trial and oracle follows
};

Job job_of(const std::string& name) {
  Job j;
  j.name = name;
  try {
    j.target = vf::find_target(name, false);
  } catch (const std::exception& e) {
    j.load_error = e.what();
    return j;
  }
  const sb::TaskSpec& t = j.target->spec;
  for (const sb::Param& p : t.params) {
    if (p.kind != sb::ParamKind::buffer) continue;
    // The buffer in its dtype, the oracle's double copy, and for outputs both again for its answer.
    const double each = static_cast<double>(sb::element_count(p, t.sizes)) * (sb::dtype_size(p.dtype) + 8.0);
    j.host_bytes += each * (p.role == sb::Role::in ? 1 : 2);
  }
  // Fitted to the oracles' times on the 2-core machine (docs/benchmarks.md): a double-precision flop
  // of a plain loop, and drawing and converting a byte of the trial, cost about 1 : 16.
  j.oracle_cost = static_cast<double>(vf::library_figure(t.library.flops, t.sizes)) +
                  16.0 * static_cast<double>(vf::library_figure(t.library.bytes, t.sizes));
  return j;
}

vf::MeasureReport unmeasured(const std::string& task, const std::string& check, const std::string& why) {
  vf::MeasureReport r;
  r.checks.task = task;
  r.checks.origin = vf::names_spec_file(task) ? task : "built-in";
  r.checks.add(check, false, why);
  return r;
}

// --oracles-only: what the host half did, without a device to check anything against.
vf::MeasureReport oracle_report(const vf::VerifyTarget& target, const vf::PreparedMeasure& prepared) {
  vf::MeasureReport r;
  r.checks.task = target.spec.name;
  r.checks.origin = target.origin;
  r.oracle_seconds = prepared.oracle_seconds;
  r.checks.seconds = prepared.oracle_seconds;
  r.checks.add("oracle:timing", prepared.failure.empty(),
               prepared.failure.empty() ? "ran at " + prepared.label + " (no device: the reference was not run)"
                                        : prepared.failure);
  return r;
}

// The oracles' side: worker threads take jobs, the costliest first, within the memory budget, and hand
// each prepared trial to the device thread.
class OracleQueue {
 public:
  OracleQueue(std::vector<Job>& jobs, const MeasureArgs& m) : jobs_(jobs), m_(m) {
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (jobs[i].target) order_.push_back(i);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::size_t a, std::size_t b) { return jobs[a].oracle_cost > jobs[b].oracle_cost; });
    deadline_ =
        m.max_seconds > 0
            ? Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(m.max_seconds))
            : Clock::time_point::max();
    budget_ = m.memory_gib * double(1 << 30);
    charged_.assign(jobs.size(), 0.0);
    for (unsigned w = 0; w < m.jobs; ++w) workers_.emplace_back([this] { work(); });
  }
  ~OracleQueue() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      next_ = order_.size();
    }
    cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  // The next prepared job (its index); nullopt once every job was handed out or skipped.
  std::optional<std::pair<std::size_t, vf::PreparedMeasure>> next_ready() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return !ready_.empty() || finished_ == order_.size(); });
    if (ready_.empty()) return std::nullopt;
    auto item = std::move(*ready_.begin());
    ready_.erase(ready_.begin());
    return item;
  }
  // The device is done with a job: its memory goes back to the budget.
  void release(std::size_t index) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      in_use_ -= charged_[index];  // a job skipped for lateness was never charged
      charged_[index] = 0;
    }
    cv_.notify_all();
  }

 private:
  void work() {
    vf::ModuleCache cache(m_.cache_dir, "-O2");  // one per thread: a cache is not shared between threads
    for (;;) {
      std::size_t index = 0;
      bool late = false;
      {
        std::unique_lock<std::mutex> lock(mu_);
        // A job starts when it fits the budget beside the others in flight, or alone.
        cv_.wait(lock, [&] {
          return next_ >= order_.size() || in_use_ == 0 || in_use_ + jobs_[order_[next_]].host_bytes <= budget_;
        });
        if (next_ >= order_.size()) return;
        index = order_[next_++];
        late = Clock::now() > deadline_;
        if (!late) {
          charged_[index] = jobs_[index].host_bytes;
          in_use_ += charged_[index];
        }
      }
      vf::PreparedMeasure p;
      if (late) {
        p.failure = "not measured: --max-seconds ran out before its oracle started";
      } else {
        try {
          p = vf::prepare_measure(*jobs_[index].target, cache, m_.options);
        } catch (const std::exception& e) {
          p.failure = std::string("preparing its trial failed: ") + e.what();
        }
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        ready_.emplace(index, std::move(p));
        ++finished_;
      }
      cv_.notify_all();
    }
  }

  std::vector<Job>& jobs_;
  const MeasureArgs& m_;
  std::vector<std::size_t> order_;
  Clock::time_point deadline_;
  double budget_ = 0, in_use_ = 0;  // bytes: whole numbers, exact in a double
  std::vector<double> charged_;     // by job: what it holds of the budget until the device is done with it
  std::size_t next_ = 0, finished_ = 0;
  std::map<std::size_t, vf::PreparedMeasure> ready_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> workers_;
};

// Every reference compiled for the device (NVRTC, several at a time), by source.
std::map<std::string, vf::DeviceImage> compile_references(const std::vector<Job>& jobs, const MeasureArgs& m,
                                                          const std::string& arch) {
  std::vector<std::string> sources;
  for (const Job& j : jobs)
    if (j.target) sources.push_back(j.target->spec.reference_source);
  const std::vector<vf::NvrtcOutcome> compiled = vf::nvrtc_compile_all(sources, m.cache_dir, arch);
  std::map<std::string, vf::DeviceImage> images;
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const vf::NvrtcOutcome& n = compiled[i];
    if (!n.available) images[sources[i]] = {{}, "NVRTC is not usable here: " + n.log};
    else if (!n.compiled) images[sources[i]] = {{}, "NVRTC refused it for " + arch + ": " + n.log};
    else images[sources[i]] = {n.cubin, {}};
  }
  return images;
}

// The device this command measures on, and the target its references compile for.
struct Device {
  std::unique_ptr<sb::detail::GpuDriver> gpu;
  std::string arch, name, error;
};

Device open_device(const MeasureArgs& m) {
  Device d;
  const sb::GpuStatus status = sb::probe_gpu();
  if (!status.ok()) {
    d.error = "no GPU (" + std::string(sb::to_string(status.state)) + ": " + status.reason + ")";
    return d;
  }
  const auto it = std::find_if(status.devices.begin(), status.devices.end(),
                               [&](const sb::DeviceInfo& i) { return i.ordinal == m.device; });
  if (it == status.devices.end()) {
    d.error = "no device " + std::to_string(m.device) + " (" + std::to_string(status.devices.size()) + " found)";
    return d;
  }
  d.arch = m.arch.empty() ? sb::device_compile_target(it->cc_major, it->cc_minor) : m.arch;
  sb::GpuRunnerConfig config;
  config.device = m.device;
  d.gpu = sb::detail::open_cuda_driver(config, d.error);
  if (d.gpu) d.name = d.gpu->device_name();
  return d;
}

// The reports as one JSON object; `complete` is false while tasks are still to come.
json reports_json(const std::vector<vf::MeasureReport>& reports, const Device& device, const MeasureArgs& m,
                  double seconds, bool complete) {
  json tasks = json::array();
  for (const vf::MeasureReport& r : reports) tasks.push_back(vf::to_json(r));
  return {{"device", device.name},   {"arch", device.arch},  {"seed", m.options.seed}, {"seconds", seconds},
          {"timed", m.options.time}, {"complete", complete}, {"tasks", tasks}};
}

// --json-file, rewritten after every task (under a temporary name, then renamed), so a run stopped
// from outside (a hung reference, a step's time limit) still leaves what it measured.
void save_json_file(const json& all, const std::string& path) {
  if (path.empty()) return;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << all.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
    if (!f) {
      std::cerr << "leap-sandbox: tasks measure: could not write " << tmp << "\n";
      return;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    std::cerr << "leap-sandbox: tasks measure: could not rename " << tmp << " to " << path << "\n";
}

// The tasks that could not be loaded (a built-in one left out, an unknown name, a bad spec file), as
// failed reports, and the jobs for the rest.
std::vector<Job> load_jobs(const MeasureArgs& m, std::vector<vf::MeasureReport>& reports) {
  std::vector<std::string> names = m.names;
  if (names.empty()) {
    for (const sb::BuiltinTask& t : sb::builtin_tasks()) names.push_back(t.spec.name);
    for (const sb::BuiltinTaskError& e : sb::builtin_task_errors())
      reports.push_back(unmeasured(e.task, "spec", e.message));
  }
  std::vector<Job> jobs;
  for (const std::string& n : names) jobs.push_back(job_of(n));
  for (const Job& j : jobs)
    if (!j.target) reports.push_back(unmeasured(j.name, "spec", j.load_error));
  return jobs;
}

// Every job: its oracle on the queue's threads, then its reference on the device (or, with
// --oracles-only, what the oracle did). Each report is printed and saved as it comes.
void measure_all(std::vector<Job>& jobs, Device& device, const MeasureArgs& m, Clock::time_point start,
                 std::vector<vf::MeasureReport>& reports) {
  OracleQueue queue(jobs, m);  // the oracles start now; the references compile meanwhile
  const std::map<std::string, vf::DeviceImage> images =
      m.oracles_only ? std::map<std::string, vf::DeviceImage>{} : compile_references(jobs, m, device.arch);
  const vf::ImageOf image_of = [&](const std::string& source) { return images.at(source); };
  while (auto item = queue.next_ready()) {
    const auto& [index, prepared] = *item;
    vf::MeasureReport r = m.oracles_only
                              ? oracle_report(*jobs[index].target, prepared)
                              : vf::measure_on_device(*device.gpu, image_of, *jobs[index].target, prepared, m.options);
    if (device.gpu) device.gpu->activity_reset();  // the driver's CUPTI records are of no use here
    queue.release(index);
    if (!m.as_json) std::cout << vf::to_text(r) << std::flush;
    reports.push_back(std::move(r));
    save_json_file(reports_json(reports, device, m, std::chrono::duration<double>(Clock::now() - start).count(), false),
                   m.json_file);
  }
}

std::string summary_line(const std::vector<vf::MeasureReport>& reports, const MeasureArgs& m, double seconds) {
  std::size_t failed = 0;
  double oracle_seconds = 0;
  for (const vf::MeasureReport& r : reports) {
    failed += r.ok() ? 0 : 1;
    oracle_seconds += r.oracle_seconds;
  }
  char line[200];
  if (m.oracles_only)
    std::snprintf(line, sizeof line,
                  "%zu of %zu oracles ran at their timing sizes, nothing checked (%.0f s; oracles %.0f s)\n",
                  reports.size() - failed, reports.size(), seconds, oracle_seconds);
  else
    std::snprintf(line, sizeof line,
                  "%zu of %zu references agree with their oracles at their timing sizes%s (%.0f s; oracles %.0f s)\n",
                  reports.size() - failed, reports.size(), m.options.time ? " and were timed" : "", seconds,
                  oracle_seconds);
  return line;
}

int run_tasks_measure(const Arguments& args) {
  const MeasureArgs m = parse_measure_args(args);
  const auto start = Clock::now();
  Device device = m.oracles_only ? Device{nullptr, "", "none (--oracles-only)", ""} : open_device(m);
  if (!device.gpu && !m.oracles_only) {
    std::cerr << "leap-sandbox: tasks measure: " << device.error << "; it runs the references on a GPU "
              << "(tasks verify checks them on the CPU)\n";
    return 3;
  }
  if (!m.as_json)
    std::cout << (m.oracles_only ? std::string("the oracles alone, no device")
                                 : "measuring on " + device.name + " (" + device.arch + ")")
              << ", " << m.jobs << " oracle threads\n"
              << std::flush;
  std::vector<vf::MeasureReport> reports;
  std::vector<Job> jobs = load_jobs(m, reports);
  for (const vf::MeasureReport& r : reports)
    if (!m.as_json) std::cout << vf::to_text(r) << std::flush;
  measure_all(jobs, device, m, start, reports);

  std::sort(reports.begin(), reports.end(),
            [](const vf::MeasureReport& a, const vf::MeasureReport& b) { return a.checks.task < b.checks.task; });
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const json all = reports_json(reports, device, m, seconds, true);
  save_json_file(all, m.json_file);
  if (m.as_json) std::cout << all.dump(1, ' ', false, json::error_handler_t::replace) << "\n";
  else std::cout << summary_line(reports, m, seconds);
  const bool all_ok = std::all_of(reports.begin(), reports.end(), [](const vf::MeasureReport& r) { return r.ok(); });
  return all_ok ? 0 : 1;
}

}  // namespace

const TasksSubcommand tasks_measure_subcommand{
    "measure",
    R"(  tasks measure [NAME | SPEC.json ...] [--json] [--json-file FILE] [--no-time] [--oracles-only] [-j N]
                [--device N] [--arch A] [--seed S] [--max-seconds S] [--memory-gib G] [--cache-dir DIR]
    On a GPU: each task's reference at its full timing sizes, checked against the task's oracle
    through the sandbox's comparison and tolerance, then timed from flushed caches with CUDA events
    (the task's warm-up and repetitions; docs/tasks.md#on-a-gpu). The outputs after the timed runs are
    checked again. The oracles run on -j N host threads (default: every hardware thread), the costliest
    first, within --memory-gib of host memory (default half the machine's); the device runs each
    reference as soon as its oracle is done. --oracles-only runs the host half alone, without a
    device (nothing is checked): how long a GPU run's oracles will take here. --max-seconds: tasks
    whose oracle had not started by then are reported as not measured. No names: every built-in
    task. References and oracles are the project's own and run unconfined in this process: never
    point this at a candidate. Exit 0 when every reference agrees, 1 otherwise, 3 without a GPU.
)",
    run_tasks_measure};

}  // namespace leap_cli

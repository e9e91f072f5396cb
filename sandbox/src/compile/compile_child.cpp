// SPDX-License-Identifier: Apache-2.0
#include "compile/compile_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "compile/compile_launcher.hpp"
#include "compile/compiler_exit.hpp"
#include "common/fd_io.hpp"
#include "common/little_endian.hpp"
#include "compile/result_codec.hpp"

namespace leap::sandbox::detail {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

void exit_confinement_failed(const char* who, const char* step, int error) noexcept {
  char msg[512];
  const int n = std::snprintf(msg, sizeof msg, "the compile %s could not confine itself (%s: %s)", who, step,
                              std::strerror(error));
  if (n > 0) (void)write_all(3, std::string_view(msg, static_cast<std::size_t>(std::min(n, 511))));
  _exit(k_exit_confinement_failed);
}

bool ran_out_of_address_space(const CompileResult& result) noexcept {
  return result.status == CompileStatus::error &&
         result.log.find("catastrophic error: out of memory") != std::string::npos;
}

int confine_compiler_process(const ChildSetup& setup, const PrivateRoot& root, const LandlockPlan& landlock,
                             const ChildLimits& limits, const char*& step) noexcept {
  const std::uint64_t inherited = mapped_bytes();  // before the private root hides /proc
  if (setup.confined && setup.private_root) {
    if (const int e = enter_private_root(root, step); e != 0) return e;
  } else if (::chdir(setup.work_dir.c_str()) != 0) {
    step = "chdir into the empty directory";
    return errno;
  }
  if (const int e = apply_limits(limits, inherited); e != 0) {
    step = "setrlimit";
    return e;
  }
  install_address_space_marker();
  if (setup.confined) {
    if (const int e = apply_landlock(landlock, setup.landlock_abi); e != 0) {
      step = "landlock";
      return e;
    }
    if (const int e = apply_seccomp(setup.filter); e != 0) {
      step = "seccomp";
      return e;
    }
  }
  return 0;
}

ChildSetup make_child_setup(const std::vector<std::string>& include_dirs, const ConfinementLimits& limits,
                            bool confined) {
  ChildSetup s;
  s.confined = confined;
  s.limits = limits;
  std::error_code ec;
  s.work_dir = make_private_dir("compile-root");
  if (!confined) return s;
  const ConfinementSupport& support = confinement_support();
  s.landlock_abi = support.landlock_abi;
  s.filter = compile_child_filter();
  s.private_root = support.mount_namespace;
  s.root.mountpoint = s.work_dir;
  s.root.uid = ::getuid();
  s.root.gid = ::getgid();
  for (const std::string& dir : include_dirs) {
    const std::string target = std::filesystem::absolute(dir, ec).lexically_normal().string();
    s.landlock.rules.push_back({target, false});
    const bool nested = std::any_of(s.root.binds.begin(), s.root.binds.end(), [&](const PrivateRoot::Bind& b) {
      return target == b.target || target.starts_with(b.target + "/");
    });
    if (nested) continue;
    const std::filesystem::path source = std::filesystem::canonical(dir, ec);
    s.root.binds.push_back({ec ? target : source.string(), target});
  }
  return s;
}

bool enable_stored_pch(ChildSetup& s, const std::string& files_dir, std::uint64_t heap_bytes) {
  constexpr const char* k_tmp = "/leap-tmp";  // inside the private root
  if (s.confined && !s.private_root) return false;
  s.pch_heap_bytes = heap_bytes;
  s.pch_scratch_bytes = 64ull << 20;  // NVRTC's temporary file is unlinked at once and holds little
  if (!s.confined) {
    s.tmpdir_env = "TMPDIR=" + s.work_dir;  // the child's own empty working directory
    return true;
  }
  s.root.binds.push_back({files_dir, files_dir});
  s.landlock.rules.push_back({files_dir, false});
  s.root.scratch = k_tmp;
  s.root.scratch_bytes = s.pch_scratch_bytes;
  s.landlock.rules.push_back({k_tmp, true, true});
  s.tmpdir_env = std::string("TMPDIR=") + k_tmp;
  return true;
}

void remove_work_dir(const ChildSetup& setup) noexcept { remove_private_dir(setup.work_dir, false); }

std::string same_words_for_every_unopenable_file(std::string log) {
  // `... cannot open source file "x": Not a directory` -> `... cannot open source file "x"`, as for a
  // missing file. NVRTC quotes the name; the reason after it holds no quote. Written into a new string
  // line by line: a log of many such lines (a candidate's #warning can say the words) costs one pass,
  // not one move of the rest of the log per line.
  std::string out;
  out.reserve(log.size());
  std::size_t line_start = 0;
  while (line_start < log.size()) {
    std::size_t line_end = log.find('\n', line_start);
    if (line_end == std::string::npos) line_end = log.size();
    const std::string_view line(log.data() + line_start, line_end - line_start);
    std::size_t open = line.find("cannot open ");
    if (open == std::string_view::npos) open = line.find("could not open ");
    const std::size_t name = open == std::string_view::npos ? std::string_view::npos : line.find(" file \"", open);
    const std::size_t reason = name == std::string_view::npos ? std::string_view::npos : line.rfind("\": ");
    const bool cut =
        reason != std::string_view::npos && reason > name + 6 && line.find('"', reason + 1) == std::string_view::npos;
    out.append(cut ? line.substr(0, reason + 1) : line);  // keep the closing quote
    if (line_end < log.size()) out.push_back('\n');
    line_start = line_end + 1;
  }
  return out;
}

CompileLimit watch_compiler_process(int fd, const Watch& watch, std::string& data, bool (*done)(const std::string&)) {
  char buf[1 << 16];
  std::chrono::nanoseconds last_cpu = watch.clock ? cpu_of(*watch.clock) : std::chrono::nanoseconds::zero();
  Clock::time_point last_progress = Clock::now();
  Clock::time_point last_sample = last_progress;
  std::chrono::nanoseconds blocked{0};  // neither runnable nor in the disk: what the backstop counts
  for (;;) {
    const Clock::time_point now = Clock::now();
    const char state = process_state(watch.pid);
    const bool waiting_for_the_machine = state == 'R' || state == 'D';
    const bool ended = state == 'Z' || state == 'X' || state == 0;  // its answer is about to be read
    if (!waiting_for_the_machine && !ended) blocked += now - last_sample;
    last_sample = now;
    if (watch.clock) {
      const std::chrono::nanoseconds cpu = cpu_of(*watch.clock);
      if (cpu >= watch.cpu_limit) return CompileLimit::cpu_time;
      if (cpu != last_cpu) {
        last_cpu = cpu;
        last_progress = now;
      } else if (watch.idle_limit.count() > 0 && now - last_progress >= watch.idle_limit) {
        if (!waiting_for_the_machine) return CompileLimit::idle;
        last_progress = now;  // runnable but not run, or in the disk: the machine is slow, the compile is not stuck
      }
    }
    if (watch.wall_limit.count() > 0 && blocked >= watch.wall_limit) return CompileLimit::wall_clock;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(watch.wall_deadline - now).count();
    if (left <= 0) return CompileLimit::wall_clock;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 20)));  // CPU is sampled every 20 ms
    if (ready <= 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return CompileLimit::none;
    data.append(buf, static_cast<std::size_t>(n));
    if (done != nullptr && done(data)) return CompileLimit::none;
  }
}

namespace {

// One compile in a child; nullopt when the launcher was lost before it said how the child ended.
std::optional<CompileResult> compile_in_child(CompileLauncher& launcher, const ChildSetup& setup, ChildBudget budget,
                                              const NvrtcRequest& request) {
  const auto t0 = Clock::now();
  LaunchedCompile child = launcher.launch(request, budget);
  const pid_t pid = child.pid();

  std::string data;
  const Watch watch{pid, cpu_clock_of(pid), budget.cpu, budget.idle, t0 + wall_cap(budget), budget.wall};
  CompileLimit killed_for = watch_compiler_process(child.result_fd(), watch, data, nullptr);
  if (killed_for != CompileLimit::none && child.held()) {
    ::kill(-pid, SIGKILL);  // its process group: anything it started goes too (the launcher has not
    ::kill(pid, SIGKILL);   // reaped it yet, so neither id can belong to another process)
  }
  const std::optional<ChildExit> ended = child.release();
  if (!ended) return std::nullopt;
  const int wstatus = ended->wait_status;
  const double cpu = ended->cpu_seconds;
  CompileResult out;
  if (killed_for == CompileLimit::none && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == k_exit_confinement_failed) {
    throw std::runtime_error("leap::sandbox: " +
                             (data.empty() ? std::string("the compile child could not set itself up") : data));
  }
  std::optional<CompileResult> decoded;
  unsigned long long pch = 0;
  std::string_view body(data);
  if (killed_for == CompileLimit::none && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 && get_u64(body, pch) &&
      pch <= static_cast<unsigned long long>(PchUse::created)) {
    decoded = decode_result(body);
  }
  if (decoded) {
    out = std::move(*decoded);
    out.pch = static_cast<PchUse>(pch);  // a stored PCH used, or none
    // The child reports one limit itself, its output's; any other is the parent's to decide.
    if (out.limit != CompileLimit::output_size) out.limit = CompileLimit::none;
    if (out.status == CompileStatus::timeout)
      mark_stopped_at_cpu_limit(out, budget);  // NVRTC's flow callback stopped it
    out.cpu_seconds = cpu;
  } else {
    out = ended_without_result(wstatus, killed_for, cpu, budget, setup.limits.address_space_bytes);
  }
  out.log = same_words_for_every_unopenable_file(std::move(out.log));
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

}  // namespace

CompileResult run_compile_child(CompileLauncher& launcher, const ChildSetup& setup, ChildBudget budget,
                                const NvrtcRequest& request) {
  // A launcher lost mid-compile (gone, stopped, deadlocked) is replaced by the next launch, and took
  // the child with it: nothing of how the compile ended is known, so it is compiled again, once.
  if (std::optional<CompileResult> r = compile_in_child(launcher, setup, budget, request)) return std::move(*r);
  if (std::optional<CompileResult> r = compile_in_child(launcher, setup, budget, request)) return std::move(*r);
  throw std::runtime_error(
      "leap::sandbox: the compile launcher was lost twice while a compile child was running (gone, stopped or "
      "deadlocked; replaced each time): an environment failure, not the candidate's");
}

}  // namespace leap::sandbox::detail

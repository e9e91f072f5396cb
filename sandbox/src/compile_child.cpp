// SPDX-License-Identifier: Apache-2.0
#include "compile_child.hpp"

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

#include "compiler_exit.hpp"
#include "detail.hpp"

namespace leap::sandbox::detail {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

void exit_confinement_failed(const char* who, const char* step, int error) noexcept {
  char msg[512];
  const int n = std::snprintf(msg, sizeof msg, "the compile %s could not confine itself (%s: %s)", who, step, std::strerror(error));
  if (n > 0) (void)write_all(3, std::string_view(msg, static_cast<std::size_t>(std::min(n, 511))));
  _exit(k_exit_confinement_failed);
}

bool ran_out_of_address_space(const CompileResult& result) noexcept {
  return result.status == CompileStatus::error && result.log.find("catastrophic error: out of memory") != std::string::npos;
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

ChildSetup make_child_setup(const std::vector<std::string>& include_dirs, const ConfinementLimits& limits, bool confined) {
  ChildSetup s;
  s.confined = confined;
  s.limits = limits;
  std::error_code ec;
  std::string pattern = (std::filesystem::temp_directory_path(ec) / "leap-compile-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("leap::sandbox: cannot create the compile child's empty directory under " +
                             std::filesystem::temp_directory_path(ec).string() + ": " + std::strerror(errno));
  }
  s.work_dir = pattern;
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

void remove_work_dir(const ChildSetup& setup) noexcept {
  if (!setup.work_dir.empty()) ::rmdir(setup.work_dir.c_str());
}

std::string same_words_for_forbidden_and_missing(std::string log) {
  // `cannot open source file "x": Permission denied` -> `cannot open source file "x"`, as for a missing file.
  static constexpr std::string_view denied = ": Permission denied";
  for (std::size_t at = log.find(denied); at != std::string::npos; at = log.find(denied, at)) {
    log.erase(at, denied.size());
  }
  return log;
}

CompileLimit watch_compiler_process(int fd, std::optional<clockid_t> clock, std::chrono::nanoseconds cpu_limit,
                                    Clock::time_point wall_deadline, std::string& data, bool (*done)(const std::string&)) {
  char buf[1 << 16];
  for (;;) {
    if (clock && cpu_of(*clock) >= cpu_limit) return CompileLimit::cpu_time;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(wall_deadline - Clock::now()).count();
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

CompileResult run_compile_child(const ChildSetup& setup, ChildBudget budget,
                                const std::function<CompileResult(std::chrono::nanoseconds)>& compile) {
  const auto t0 = Clock::now();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("leap::sandbox: pipe failed: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("leap::sandbox: cannot start a compile child: ") + std::strerror(e));
  }
  if (pid == 0) {
    ::close(fds[0]);
    if (!die_with_parent(parent)) _exit(k_exit_parent_gone);
    reset_process_state();
    if (const int e = keep_only_descriptors(fds[1]); e != 0) _exit(k_exit_confinement_failed);
    ChildLimits limits;
    limits.address_space_extra = setup.limits.address_space_bytes;
    limits.cpu_seconds = static_cast<std::uint64_t>(std::chrono::ceil<std::chrono::seconds>(budget.cpu).count()) + 1;
    limits.open_files = setup.limits.max_open_files;
    const char* step = "";
    if (const int e = confine_compiler_process(setup, setup.root, setup.landlock, limits, step); e != 0) {
      exit_confinement_failed("child", step, e);
    }
    const CompileResult r = compile(budget.cpu);
    if (ran_out_of_address_space(r)) _exit(k_exit_address_space);
    _exit(write_all(3, encode_result(r)) ? 0 : 3);
  }
  ::close(fds[1]);

  std::string data;
  CompileLimit killed_for = watch_compiler_process(fds[0], cpu_clock_of(pid), budget.cpu, t0 + budget.wall, data, nullptr);
  ::close(fds[0]);
  if (killed_for != CompileLimit::none) {
    ::kill(-pid, SIGKILL);  // its process group: anything it started goes too
    ::kill(pid, SIGKILL);
  }
  int wstatus = 0;
  rusage usage{};
  while (::wait4(pid, &wstatus, 0, &usage) < 0 && errno == EINTR) {
  }
  const double cpu = seconds_of(usage.ru_utime) + seconds_of(usage.ru_stime);
  CompileResult out;
  if (killed_for == CompileLimit::none && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == k_exit_confinement_failed) {
    throw std::runtime_error("leap::sandbox: " + (data.empty() ? std::string("the compile child could not set itself up") : data));
  }
  std::optional<CompileResult> decoded;
  if (killed_for == CompileLimit::none && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) decoded = decode_result(data);
  if (decoded) {
    out = std::move(*decoded);
    out.limit = CompileLimit::none;
    if (out.status == CompileStatus::timeout) mark_stopped_at_cpu_limit(out, budget);  // NVRTC's flow callback stopped it
    out.cpu_seconds = cpu;
  } else {
    out = ended_without_result(wstatus, killed_for, cpu, budget, setup.limits.address_space_bytes);
  }
  out.log = same_words_for_forbidden_and_missing(std::move(out.log));
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

}  // namespace leap::sandbox::detail

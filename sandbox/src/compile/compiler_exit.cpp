// SPDX-License-Identifier: Apache-2.0
#include "compile/compiler_exit.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cstdio>
#include <string_view>

#include "confinement/confinement.hpp"

namespace leap::sandbox::detail {

std::string milliseconds_text(std::chrono::nanoseconds d) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
}

double seconds_of(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6; }

std::chrono::nanoseconds cpu_of(clockid_t clock) {
  timespec ts{};
  if (::clock_gettime(clock, &ts) != 0) return std::chrono::nanoseconds::zero();
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

std::optional<clockid_t> cpu_clock_of(pid_t pid) {
  clockid_t clock{};
  if (::clock_getcpuclockid(pid, &clock) != 0) return std::nullopt;
  return clock;
}

char process_state(pid_t pid) noexcept {
  char path[32];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char stat[512];
  const ssize_t n = ::read(fd, stat, sizeof stat - 1);
  ::close(fd);
  if (n <= 0) return 0;
  const std::string_view text(stat, static_cast<std::size_t>(n));
  const std::size_t close = text.rfind(')');  // the command name, in parentheses, may hold anything
  return close != std::string_view::npos && close + 2 < text.size() ? text[close + 2] : 0;
}

void mark_stopped_at_cpu_limit(CompileResult& result, const ChildBudget& budget) {
  result.limit = CompileLimit::cpu_time;
  result.log = "compile stopped at its CPU time limit of " + milliseconds_text(budget.stated) +
               (result.log.empty() ? "" : "\n" + result.log);
}

CompileResult ended_without_result(int wait_status, CompileLimit killed_for, double cpu_seconds,
                                   const ChildBudget& budget, std::uint64_t address_space_bytes) {
  const double cpu_limit = std::chrono::duration<double>(budget.cpu).count();
  if (killed_for == CompileLimit::none && WIFSIGNALED(wait_status) &&
      (WTERMSIG(wait_status) == SIGXCPU || (WTERMSIG(wait_status) == SIGKILL && cpu_seconds >= cpu_limit))) {
    killed_for = CompileLimit::cpu_time;  // RLIMIT_CPU, the backstop of the parent's sampling
  }
  CompileResult out;
  out.cpu_seconds = cpu_seconds;
  if (killed_for == CompileLimit::cpu_time) {
    out.status = CompileStatus::timeout;
    out.log = "compile stopped at its CPU time limit of " + milliseconds_text(budget.stated);
  } else if (killed_for == CompileLimit::idle) {
    out.status = CompileStatus::timeout;
    out.log = "compile stopped: the compiler made no progress for " + milliseconds_text(budget.idle) +
              " (its CPU time stood still: stopped or deadlocked; it used " +
              std::to_string(static_cast<long long>(cpu_seconds * 1000)) + " ms of CPU)";
  } else if (killed_for == CompileLimit::wall_clock) {
    out.status = CompileStatus::timeout;
    out.log = "compile stopped at its wall-clock backstop of " + milliseconds_text(budget.wall) +
              " (time neither running nor waiting for a CPU or the disk; " + milliseconds_text(wall_cap(budget)) +
              " in all at most; it used " + std::to_string(static_cast<long long>(cpu_seconds * 1000)) + " ms of CPU)";
  } else if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == k_exit_address_space) {
    out.status = CompileStatus::resource_limit;
    killed_for = CompileLimit::address_space;
    out.log = "compile stopped at its address-space limit (" + std::to_string(address_space_bytes >> 20) +
              " MiB beyond the compiler itself)";
  } else if (WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGSYS) {
    out.status = CompileStatus::error;
    out.log = "the compiler made a system call the sandbox forbids (seccomp); nothing was compiled";
  } else {
    out.status = CompileStatus::error;
    out.log = WIFSIGNALED(wait_status)
                  ? "the compiler process died (signal " + std::to_string(WTERMSIG(wait_status)) + ")"
                  : "the compiler process failed (exit " + std::to_string(WEXITSTATUS(wait_status)) + ")";
  }
  out.limit = killed_for;
  return out;
}

}  // namespace leap::sandbox::detail

// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "runner_pipe/frames.hpp"
#include "runner_pipe/runner_stages.hpp"
#include "evaluation/gpu_runner.hpp"

namespace leap::sandbox {
namespace {

using Clock = std::chrono::steady_clock;

std::string describe_wait(int wstatus) {
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    const char* name = sigabbrev_np(sig);
    return "killed by signal " + std::to_string(sig) + (name != nullptr ? std::string(" (SIG") + name + ")" : "");
  }
  if (WIFEXITED(wstatus)) return "exited with status " + std::to_string(WEXITSTATUS(wstatus));
  return "stopped";
}

// Writes with SIGPIPE blocked on this thread, so a dead runner is an error code and not a signal
// that kills the harness; a SIGPIPE left pending is consumed before the mask is restored.
bool write_request(int fd, std::string_view payload) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  const bool ok = detail::write_frame(fd, detail::FrameKind::request, payload);
  if (!ok) {
    const timespec zero{0, 0};
    while (sigtimedwait(&block, nullptr, &zero) > 0) {}
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

int above_fixed_descriptors(int fd) {
  if (fd > k_runner_reply_fd) return fd;
  const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, k_runner_reply_fd + 1);
  ::close(fd);
  return high;
}

}  // namespace

std::string find_gpu_runner_executable() {
  auto usable = [](const std::filesystem::path& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0; };
  // LEAP_SANDBOX_WORKER is the 0.1 spelling, read until 0.3.
  for (const char* name : {"LEAP_SANDBOX_GPU_RUNNER", "LEAP_SANDBOX_WORKER"}) {
    if (const char* env = std::getenv(name); env != nullptr && usable(env)) return env;
  }
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && usable(self.parent_path() / "leap-sandbox-gpu-runner"))
    return (self.parent_path() / "leap-sandbox-gpu-runner").string();
#ifdef LEAP_SANDBOX_GPU_RUNNER_INSTALLED
  if (usable(LEAP_SANDBOX_GPU_RUNNER_INSTALLED)) return LEAP_SANDBOX_GPU_RUNNER_INSTALLED;
#endif
#ifdef LEAP_SANDBOX_GPU_RUNNER_BUILT
  if (usable(LEAP_SANDBOX_GPU_RUNNER_BUILT)) return LEAP_SANDBOX_GPU_RUNNER_BUILT;
#endif
  return {};
}

std::string_view to_string(CallStatus status) noexcept {
  switch (status) {
    case CallStatus::ok: return "ok";
    case CallStatus::timeout: return "timeout";
    case CallStatus::died: return "died";
    case CallStatus::failed: return "failed";
  }
  return "unknown";
}

GpuRunner::GpuRunner(GpuRunnerConfig config) : config_(std::move(config)) {}
GpuRunner::~GpuRunner() { stop(); }

bool GpuRunner::running() const noexcept { return pid_ > 0; }
int GpuRunner::pid() const noexcept { return pid_; }
int GpuRunner::started() const noexcept { return started_; }
void GpuRunner::restart_next() { restart_ = true; }

void GpuRunner::stop() {
  if (to_runner_ >= 0) ::close(to_runner_);
  if (from_runner_ >= 0) ::close(from_runner_);
  to_runner_ = from_runner_ = -1;
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);  // its process group: anything it started goes too
    ::kill(pid_, SIGKILL);
    int wstatus = 0;
    while (::waitpid(pid_, &wstatus, 0) < 0 && errno == EINTR) {}
  }
  pid_ = 0;
  restart_ = false;
}

bool GpuRunner::start(std::string& error) {
  const std::string exe = config_.executable.empty() ? find_gpu_runner_executable() : config_.executable;
  if (exe.empty() || ::access(exe.c_str(), X_OK) != 0) {
    error = "cannot find the GPU runner program leap-sandbox-gpu-runner" +
            (exe.empty()
                 ? std::string(" (looked in $LEAP_SANDBOX_GPU_RUNNER, beside this program and in the install prefix)")
                 : " at " + exe) +
            "; install it beside leap-sandbox or set GpuRunnerConfig::executable";
    return false;
  }
  int to[2], from[2];
  if (::pipe2(to, O_CLOEXEC) != 0) {
    error = std::string("pipe failed: ") + std::strerror(errno);
    return false;
  }
  if (::pipe2(from, O_CLOEXEC) != 0) {
    error = std::string("pipe failed: ") + std::strerror(errno);
    ::close(to[0]);
    ::close(to[1]);
    return false;
  }
  // Above the runner's fixed numbers, so placing one end cannot overwrite the other.
  for (int* fd : {&to[0], &to[1], &from[0], &from[1]}) *fd = above_fixed_descriptors(*fd);
  // The runner's ends become its descriptors 3 (requests) and 4 (replies); everything else is closed.
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_adddup2(&files, to[0], k_runner_request_fd);
  posix_spawn_file_actions_adddup2(&files, from[1], k_runner_reply_fd);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY,
                                   0);  // device printf must not reach a protocol on stdout
  posix_spawn_file_actions_addclosefrom_np(&files, k_runner_reply_fd + 1);
  // Own process group, every signal at its default, nothing blocked.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<std::string> args = {exe,
                                   "--parent",
                                   std::to_string(::getpid()),
                                   "--driver",
                                   config_.driver_library,
                                   "--device",
                                   std::to_string(config_.device)};
  if (config_.fake) args.push_back("--fake");
  if (!config_.confine) args.push_back("--unconfined");
  if (config_.allow_pageable_host_access) args.push_back("--allow-pageable-host-access");
  args.insert(args.end(), {"--local-memory-restart-bytes", std::to_string(config_.local_memory_restart_bytes)});
  // A short environment: what the driver and the loader need, nothing of the harness's secrets.
  std::vector<std::string> env = {"CUDA_CACHE_DISABLE=1"};
  // The sandbox's own switches are read in the runner (the timer, the L2 flush), so they pass too.
  for (const char* name : {"LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_MODULE_LOADING",
                           "LEAP_SANDBOX_TIMER", "LEAP_SANDBOX_L2_FLUSH"}) {
    if (const char* v = std::getenv(name)) env.push_back(std::string(name) + "=" + v);
  }
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, exe.c_str(), &files, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  ::close(to[0]);
  ::close(from[1]);
  if (rc != 0) {
    error = "cannot start " + exe + ": " + std::strerror(rc);
    ::close(to[1]);
    ::close(from[0]);
    return false;
  }
  to_runner_ = to[1];
  from_runner_ = from[0];
  pid_ = pid;
  ++started_;
  restart_ = false;
  return true;
}

CallResult GpuRunner::call(std::string_view request, std::chrono::milliseconds limit) {
  const auto t0 = Clock::now();
  CallResult r;
  auto finish = [&](CallStatus s) {
    r.status = s;
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return r;
  };
  if (restart_) stop();
  if (pid_ > 0) {  // a runner that died while idle is replaced before it is used
    int wstatus = 0;
    if (::waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = 0;
      stop();
    }
  }
  if (pid_ == 0 && !start(r.detail)) return finish(CallStatus::failed);
  if (!write_request(to_runner_, request)) {
    stop();
    if (!start(r.detail) || !write_request(to_runner_, request)) {
      r.detail = "cannot send the request to the runner";
      stop();
      return finish(CallStatus::failed);
    }
  }
  auto deadline = Clock::now() + limit;
  for (;;) {
    detail::FrameKind kind{};
    std::string payload;
    const detail::ReadStatus s = detail::read_frame(from_runner_, kind, payload, deadline);
    if (s == detail::ReadStatus::ok && kind == detail::FrameKind::stage) {
      r.last_stage = payload;
      if (payload == detail::stage::init) deadline = Clock::now() + config_.init_timeout;
      else if (payload == detail::stage::ready) deadline = Clock::now() + limit;
      continue;
    }
    if (s == detail::ReadStatus::ok && kind == detail::FrameKind::reply) {
      r.reply = std::move(payload);
      return finish(CallStatus::ok);
    }
    if (s == detail::ReadStatus::timeout) {
      r.detail = "no answer within " + std::to_string(limit.count()) + " ms" +
                 (r.last_stage.empty() ? "" : " (last stage: " + r.last_stage + ")") + "; runner killed";
      stop();
      return finish(CallStatus::timeout);
    }
    // EOF or garbage: give an exiting runner a moment so its own exit status is what we report.
    int wstatus = 0;
    pid_t done = 0;
    for (int i = 0; i < 200 && done == 0; ++i) {
      done = ::waitpid(pid_, &wstatus, WNOHANG);
      if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const bool exited = done == pid_;
    if (exited) {
      r.detail = "runner " + describe_wait(wstatus);
      pid_ = 0;
    } else {
      r.detail = s == detail::ReadStatus::eof ? "runner closed its pipe" : "runner sent a malformed frame";
    }
    stop();
    return finish(s == detail::ReadStatus::eof || exited ? CallStatus::died : CallStatus::failed);
  }
}

}  // namespace leap::sandbox

// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "frames.hpp"
#include "leap/sandbox/worker.hpp"

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

// Writes with SIGPIPE blocked on this thread, so a dead worker is an error code and not a signal
// that kills the harness; a SIGPIPE left pending is consumed before the mask is restored.
bool write_request(int fd, std::string_view payload) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  const bool ok = detail::write_frame(fd, 'Q', payload);
  if (!ok) {
    const timespec zero{0, 0};
    while (sigtimedwait(&block, nullptr, &zero) > 0) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

}  // namespace

std::string_view to_string(CallStatus status) noexcept {
  switch (status) {
    case CallStatus::ok: return "ok";
    case CallStatus::timeout: return "timeout";
    case CallStatus::died: return "died";
    case CallStatus::failed: return "failed";
  }
  return "unknown";
}

WorkerProcess::WorkerProcess(WorkerConfig config) : config_(std::move(config)) {}
WorkerProcess::~WorkerProcess() { stop(); }

bool WorkerProcess::running() const noexcept { return pid_ > 0; }
int WorkerProcess::pid() const noexcept { return pid_; }
int WorkerProcess::started() const noexcept { return started_; }
void WorkerProcess::restart_next() { restart_ = true; }

void WorkerProcess::stop() {
  if (to_worker_ >= 0) ::close(to_worker_);
  if (from_worker_ >= 0) ::close(from_worker_);
  to_worker_ = from_worker_ = -1;
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int wstatus = 0;
    while (::waitpid(pid_, &wstatus, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = 0;
  restart_ = false;
}

bool WorkerProcess::start(std::string& error) {
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
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    error = std::string("fork failed: ") + std::strerror(errno);
    for (int fd : {to[0], to[1], from[0], from[1]}) ::close(fd);
    return false;
  }
  if (pid == 0) {
    // The worker: dies with the harness; stdin and stdout go to /dev/null, so device printf cannot
    // corrupt a parent that speaks a protocol on stdout (leap-sandbox serve); stderr is kept.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(1);
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);
      if (null > 2) ::close(null);
    }
    const int in = to[0], out = from[1];
    const long max_fd = std::min(::sysconf(_SC_OPEN_MAX), 65536L);
    for (int fd = 3; fd < max_fd; ++fd) {
      if (fd != in && fd != out) ::close(fd);
    }
    ::signal(SIGPIPE, SIG_DFL);
    _exit(run_worker(in, out, config_));
  }
  ::close(to[0]);
  ::close(from[1]);
  to_worker_ = to[1];
  from_worker_ = from[0];
  pid_ = pid;
  ++started_;
  restart_ = false;
  return true;
}

CallResult WorkerProcess::call(std::string_view request, std::chrono::milliseconds limit) {
  const auto t0 = Clock::now();
  CallResult r;
  auto finish = [&](CallStatus s) {
    r.status = s;
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return r;
  };
  if (restart_) stop();
  if (pid_ > 0) {  // a worker that died while idle is replaced before it is used
    int wstatus = 0;
    if (::waitpid(pid_, &wstatus, WNOHANG) == pid_) {
      pid_ = 0;
      stop();
    }
  }
  if (pid_ == 0 && !start(r.detail)) return finish(CallStatus::failed);
  if (!write_request(to_worker_, request)) {
    stop();
    if (!start(r.detail) || !write_request(to_worker_, request)) {
      r.detail = "cannot send the request to the worker";
      stop();
      return finish(CallStatus::failed);
    }
  }
  auto deadline = Clock::now() + limit;
  for (;;) {
    char kind = 0;
    std::string payload;
    const detail::ReadStatus s = detail::read_frame(from_worker_, kind, payload, deadline);
    if (s == detail::ReadStatus::ok && kind == 'S') {
      r.last_stage = payload;
      if (payload == "init") deadline = Clock::now() + config_.init_timeout;
      else if (payload == "ready") deadline = Clock::now() + limit;
      continue;
    }
    if (s == detail::ReadStatus::ok && kind == 'R') {
      r.reply = std::move(payload);
      return finish(CallStatus::ok);
    }
    if (s == detail::ReadStatus::timeout) {
      r.detail = "no answer within " + std::to_string(limit.count()) + " ms" +
                 (r.last_stage.empty() ? "" : " (last stage: " + r.last_stage + ")") + "; worker killed";
      stop();
      return finish(CallStatus::timeout);
    }
    // EOF or garbage: give an exiting worker a moment so its own exit status is what we report.
    int wstatus = 0;
    pid_t done = 0;
    for (int i = 0; i < 200 && done == 0; ++i) {
      done = ::waitpid(pid_, &wstatus, WNOHANG);
      if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const bool exited = done == pid_;
    if (exited) {
      r.detail = "worker " + describe_wait(wstatus);
      pid_ = 0;
    } else {
      r.detail = s == detail::ReadStatus::eof ? "worker closed its pipe" : "worker sent a malformed frame";
    }
    stop();
    return finish(s == detail::ReadStatus::eof || exited ? CallStatus::died : CallStatus::failed);
  }
}

}  // namespace leap::sandbox

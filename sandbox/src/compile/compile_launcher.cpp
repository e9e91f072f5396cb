// SPDX-License-Identifier: Apache-2.0
#include "compile/compile_launcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>
#include <thread>

#include "compile/compile_frames.hpp"
#include "compile/pooled_compiler.hpp"
#include "compile/compiler_exit.hpp"
#include "confinement/confinement.hpp"
#include "common/fd_io.hpp"
#include "common/little_endian.hpp"
#include "compile/result_codec.hpp"

extern char** environ;

namespace leap::sandbox::detail {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int k_launcher_control_fd = 3;  // where keep_only_descriptors puts the launcher's control socket
constexpr char k_release = 'R';
// What the descriptor message asks for: a one-shot compile child, or a pooled compiler.
constexpr char k_kind_compile = 'L';
constexpr char k_kind_pooled = 'W';
constexpr std::chrono::seconds k_start_limit{30};  // from the request to the child's pid
// A released child has closed its answer, so it is exiting; past this it is killed rather than waited for.
constexpr std::chrono::seconds k_exit_grace{2};

// ---- in the launcher and its children: system calls, and allocation only in one thread ----

bool send_u64s(int fd, unsigned long long a, unsigned long long b) noexcept {
  std::string out;
  put_u64(out, a);
  put_u64(out, b);
  return ::send(fd, out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size());
}

// One byte (the kind of process asked for) with room for two descriptors beside it: the message that
// hands the launcher the request's socket and the new process's descriptor (a compile child's result
// pipe, a pooled compiler's end of its socket pair).
struct DescriptorMessage {
  char byte = k_kind_compile;
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  msghdr msg{};
  DescriptorMessage() noexcept {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  DescriptorMessage(const DescriptorMessage&) = delete;  // points into itself
};

// Two descriptors passed with one byte: 1 sent, 0 the peer is gone, -1 its socket stayed full for a
// second (it reads nothing).
int send_descriptors(int socket, char kind, int first, int second) noexcept {
  DescriptorMessage m;
  m.byte = kind;
  cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(2 * sizeof(int));
  const int fds[2] = {first, second};
  std::memcpy(CMSG_DATA(c), fds, sizeof fds);
  ssize_t n;
  bool waited = false;
  while ((n = ::sendmsg(socket, &m.msg, MSG_NOSIGNAL | MSG_DONTWAIT)) < 0) {
    if (errno == EINTR) continue;
    if ((errno != EAGAIN && errno != EWOULDBLOCK) || waited) return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : 0;
    pollfd p{socket, POLLOUT, 0};
    (void)::poll(&p, 1, 1000);
    waited = true;
  }
  return n == 1 ? 1 : 0;
}

// 1: two descriptors received; 0: the peer closed the socket; -1: anything else (nothing to act on).
int receive_descriptors(int socket, char& kind, int& first, int& second) noexcept {
  DescriptorMessage m;
  ssize_t n;
  while ((n = ::recvmsg(socket, &m.msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
  if (n == 0) return 0;
  if (n < 0) return errno == EAGAIN ? -1 : 0;
  const cmsghdr* c = CMSG_FIRSTHDR(&m.msg);
  if (c == nullptr || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
      c->cmsg_len != CMSG_LEN(2 * sizeof(int))) {
    return -1;
  }
  int fds[2];
  std::memcpy(fds, CMSG_DATA(c), sizeof fds);
  first = fds[0];
  second = fds[1];
  kind = m.byte;
  return 1;
}

// The compile child's life, in the launcher's fork: confine, compile, answer on descriptor 3.
[[noreturn]] void compile_child_main(const ChildSetup& setup, pid_t launcher, int result, const std::string& payload) {
  if (!die_with_parent(launcher)) _exit(k_exit_parent_gone);
  reset_process_state();
  if (keep_only_descriptors(result) != 0) _exit(k_exit_confinement_failed);
  std::string_view in(payload);
  unsigned long long cpu_ns = 0, wall_ns = 0;
  if (!get_u64(in, cpu_ns) || !get_u64(in, wall_ns)) _exit(3);
  const std::chrono::nanoseconds cpu_budget(cpu_ns);
  ChildLimits limits;
  limits.address_space_extra =
      setup.limits.address_space_bytes + setup.pch_heap_bytes;  // the heap is the sandbox's, not the candidate's share
  limits.cpu_seconds = static_cast<std::uint64_t>(std::chrono::ceil<std::chrono::seconds>(cpu_budget).count()) + 1;
  limits.open_files = setup.limits.max_open_files;
  limits.file_size = setup.pch_scratch_bytes;  // NVRTC's temporary file when it uses a PCH; 0 otherwise
  // On the stack: this process never returns from here, and allocates nothing to set it.
  char* environment[] = {const_cast<char*>(setup.tmpdir_env.c_str()), nullptr};
  if (!setup.tmpdir_env.empty()) environ = environment;
  const char* step = "";
  if (const int e = confine_compiler_process(setup, setup.root, setup.landlock, limits, step); e != 0) {
    exit_confinement_failed("child", step, e);
  }
  const std::optional<NvrtcRequest> request = decode_request(in);
  if (!request) _exit(3);
  const CompileResult r =
      nvrtc_compile(*request, CLOCK_PROCESS_CPUTIME_ID, cpu_budget, Clock::now() + std::chrono::nanoseconds(wall_ns));
  if (ran_out_of_address_space(r)) _exit(k_exit_address_space);
  std::string reply;
  put_u64(reply, static_cast<unsigned long long>(r.pch));
  reply += encode_result(r);
  _exit(write_all(3, reply) ? 0 : 3);
}

struct Child {
  pid_t pid;
  int control;
};

// Reaps a child (a compile child or a pooled compiler) whose work is over and tells the Compiler how it
// ended. `released`: the Compiler is done with it (it may still be exiting); otherwise it was
// abandoned and is killed at once.
void reap_and_report(const Child& child, bool released) noexcept {
  int status = 0;
  rusage usage{};
  pid_t got = 0;
  if (released) {
    const auto give_up = Clock::now() + k_exit_grace;
    while ((got = ::wait4(child.pid, &status, WNOHANG, &usage)) == 0 && Clock::now() < give_up) {
      const timespec pause{0, 200'000};
      ::nanosleep(&pause, nullptr);
    }
  }
  if (got <= 0) {
    ::kill(-child.pid, SIGKILL);  // its process group: anything it started goes too
    ::kill(child.pid, SIGKILL);
    while ((got = ::wait4(child.pid, &status, 0, &usage)) < 0 && errno == EINTR) {}
  }
  const auto cpu = std::chrono::seconds(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                   std::chrono::microseconds(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  (void)send_u64s(child.control, static_cast<unsigned int>(status),
                  static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(cpu).count()));
  ::close(child.control);
}

// The launcher's life: one request at a time from the control socket, until the Compiler hangs up.
[[noreturn]] void launcher_main(const ChildSetup& setup, int control, pid_t parent, std::vector<Child>& children,
                                std::vector<pollfd>& watched) {
  if (!die_with_parent(parent)) _exit(k_exit_parent_gone);
  reset_process_state();
  if (keep_only_descriptors(control) != 0) _exit(k_exit_confinement_failed);
  const pid_t self = ::getpid();
  std::string payload;
  for (;;) {
    watched.clear();
    watched.push_back({k_launcher_control_fd, POLLIN, 0});
    for (const Child& c : children) watched.push_back({c.control, POLLIN, 0});
    if (::poll(watched.data(), watched.size(), -1) < 0) {
      if (errno == EINTR) continue;
      _exit(3);
    }
    // Children first: a released one frees its slot before a new one is made.
    for (std::size_t i = children.size(); i-- > 0;) {
      const short ready = watched[i + 1].revents;
      if (ready == 0) continue;
      char byte = 0;
      const ssize_t n = ::recv(children[i].control, &byte, 1, MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      reap_and_report(children[i], n == 1 && byte == k_release);
      children.erase(children.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (watched[0].revents == 0) continue;
    int compile_socket = -1, result = -1;
    char kind = 0;
    const int got = receive_descriptors(k_launcher_control_fd, kind, compile_socket, result);
    if (got == 0) {  // the Compiler is gone: so are its compiles
      for (const Child& c : children) reap_and_report(c, false);
      _exit(0);
    }
    if (got < 0) continue;
    if ((kind != k_kind_compile && kind != k_kind_pooled) || !read_frame(compile_socket, payload)) {
      ::close(compile_socket);
      ::close(result);
      continue;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (kind == k_kind_pooled) pooled_compiler_main(setup, payload, result, self);
      compile_child_main(setup, self, result, payload);
    }
    ::close(result);
    if (pid < 0 || !send_u64s(compile_socket, static_cast<unsigned long long>(pid > 0 ? pid : 0), 0)) {
      if (pid > 0) reap_and_report({pid, compile_socket}, false);
      else ::close(compile_socket);
      continue;
    }
    children.push_back({pid, compile_socket});
  }
}

// Watches the launcher while the Compiler waits for one of its answers (compile_launcher.hpp): lost
// once it has been stopped for k_launcher_stopped_grace (a debugger's brief stops at each system call
// are not that), has stood still for k_launcher_stall (no CPU, neither runnable nor in the disk), or is
// gone.
class LauncherWatch {
 public:
  explicit LauncherWatch(pid_t launcher)
      : pid_(launcher),
        clock_(cpu_clock_of(launcher)),
        cpu_(clock_ ? cpu_of(*clock_) : std::chrono::nanoseconds{}),
        moved_(Clock::now()) {}
  bool lost() {
    const auto now = Clock::now();
    const char state = pid_ > 0 ? process_state(pid_) : 0;          // 0: not known (no /proc): its CPU clock decides
    if (state == 'Z' || state == 'X' || state == 'x') return true;  // dead: its answer will never come
    if (state == 'T' || state == 't') {
      if (!stopped_since_) stopped_since_ = now;
      return now - *stopped_since_ >= k_launcher_stopped_grace;
    }
    stopped_since_.reset();
    const std::chrono::nanoseconds cpu = clock_ ? cpu_of(*clock_) : std::chrono::nanoseconds{};
    if (cpu != cpu_ || state == 'R' || state == 'D' || !clock_) {
      cpu_ = cpu;
      moved_ = now;
      return false;
    }
    return now - moved_ >= k_launcher_stall;
  }

 private:
  pid_t pid_;
  std::optional<clockid_t> clock_;
  std::chrono::nanoseconds cpu_;
  Clock::time_point moved_;
  std::optional<Clock::time_point> stopped_since_;
};

enum class Read { all, closed, lost, late };

// Reads two u64s the launcher sends on `fd`, within `limit`, asking `watch` every 20 ms meanwhile.
Read read_u64s_within(int fd, unsigned long long& a, unsigned long long& b, std::chrono::milliseconds limit,
                      LauncherWatch& watch) {
  char buf[16];
  std::size_t have = 0;
  const auto deadline = Clock::now() + limit;
  while (have < sizeof buf) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Read::late;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 20)));
    if (ready < 0 && errno != EINTR) return Read::closed;
    if (ready == 0 && watch.lost()) return Read::lost;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fd, buf + have, sizeof buf - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Read::closed;
    have += static_cast<std::size_t>(n);
  }
  std::string_view in(buf, sizeof buf);
  return get_u64(in, a) && get_u64(in, b) ? Read::all : Read::closed;
}

}  // namespace

// ---- LaunchedCompile ----

LaunchedCompile::LaunchedCompile(pid_t pid, int result_fd, int control_fd, pid_t launcher) noexcept
    : pid_(pid), result_fd_(result_fd), control_fd_(control_fd), launcher_(launcher) {}

LaunchedCompile::LaunchedCompile(LaunchedCompile&& other) noexcept
    : pid_(other.pid_), result_fd_(other.result_fd_), control_fd_(other.control_fd_), launcher_(other.launcher_) {
  other.result_fd_ = -1;
  other.control_fd_ = -1;
}

LaunchedCompile::~LaunchedCompile() {
  if (result_fd_ >= 0) ::close(result_fd_);
  if (control_fd_ >= 0) ::close(control_fd_);  // unreleased: the launcher kills and reaps the child
}

std::optional<ChildExit> LaunchedCompile::release() {
  if (control_fd_ < 0) return std::nullopt;
  const char byte = k_release;
  std::optional<ChildExit> out;
  unsigned long long status = 0, cpu_ns = 0;
  // The launcher answers once the child has exited (at most k_exit_grace after a clean end, at once
  // after a kill); one that does not answer in ten times that, or is lost meanwhile, is not waited for.
  LauncherWatch watch(launcher_);
  if (::send(control_fd_, &byte, 1, MSG_NOSIGNAL) == 1 &&
      read_u64s_within(control_fd_, status, cpu_ns, 10 * k_exit_grace, watch) == Read::all) {
    out = ChildExit{static_cast<int>(status), std::chrono::duration<double>(std::chrono::nanoseconds(cpu_ns)).count()};
  }
  ::close(control_fd_);
  control_fd_ = -1;
  return out;
}

bool LaunchedCompile::held() const noexcept {
  if (control_fd_ < 0 || pid_ <= 0) return false;
  // The launcher writes on this socket only when asked (release), so anything readable is its end.
  pollfd p{control_fd_, POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;
}

// ---- CompileLauncher ----

CompileLauncher::CompileLauncher(const ChildSetup& setup) : setup_(setup) { start(); }

CompileLauncher::~CompileLauncher() { stop(); }

pid_t CompileLauncher::pid() const {
  const std::lock_guard lock(mutex_);
  return pid_;
}

std::uint64_t CompileLauncher::replacements() const {
  const std::lock_guard lock(mutex_);
  return generation_ > 0 ? generation_ - 1 : 0;
}

void CompileLauncher::start() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    throw std::runtime_error(std::string("leap::sandbox: socketpair failed: ") + std::strerror(errno));
  }
  // Made here, so the launcher allocates as little as it can before its first request.
  std::vector<Child> children;
  children.reserve(256);
  std::vector<pollfd> watched;
  watched.reserve(257);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    throw std::runtime_error(std::string("leap::sandbox: cannot start the compile launcher: ") + std::strerror(e));
  }
  if (pid == 0) {
    ::close(sv[0]);
    launcher_main(setup_, sv[1], parent, children, watched);
  }
  ::close(sv[1]);
  pid_ = pid;
  control_ = sv[0];
  ++generation_;
}

void CompileLauncher::stop() noexcept {
  if (control_ >= 0) ::close(control_);  // the launcher kills what it still runs, and exits
  control_ = -1;
  if (pid_ <= 0) return;
  int status = 0;
  const auto give_up = Clock::now() + k_exit_grace;
  pid_t got;
  while ((got = ::waitpid(pid_, &status, WNOHANG)) == 0 && Clock::now() < give_up) {
    const timespec pause{0, 1'000'000};
    ::nanosleep(&pause, nullptr);
  }
  if (got == 0) {
    ::kill(pid_, SIGKILL);  // its children die with it (PR_SET_PDEATHSIG)
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
  }
  pid_ = -1;
}

CompileLauncher::Attempt CompileLauncher::try_launch(const std::string& message) {
  int result[2];
  if (::pipe2(result, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("leap::sandbox: pipe failed: ") + std::strerror(errno));
  }
  std::optional<Attempt> attempt;
  try {
    attempt.emplace(try_start(k_kind_compile, result[1], message));
  } catch (...) {
    ::close(result[0]);
    ::close(result[1]);
    throw;
  }
  ::close(result[1]);
  if (attempt->launched.pid_ <= 0) {
    ::close(result[0]);
  } else {
    attempt->launched.result_fd_ = result[0];
  }
  return std::move(*attempt);
}

CompileLauncher::Attempt CompileLauncher::try_start(char kind, int passed, const std::string& message) {
  int compile_socket[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, compile_socket) != 0) {
    throw std::runtime_error(std::string("leap::sandbox: socketpair failed: ") + std::strerror(errno));
  }
  Attempt attempt{LaunchedCompile(-1, -1, compile_socket[0], -1)};
  int sent;
  pid_t launcher;
  {
    const std::lock_guard lock(mutex_);
    launcher = pid_;
    attempt.generation = generation_;
    sent = send_descriptors(control_, kind, compile_socket[1], passed);
  }
  ::close(compile_socket[1]);
  attempt.launched.launcher_ = launcher;
  LauncherWatch watch(launcher);
  unsigned long long pid = 0, unused = 0;
  Read read = sent < 0 ? Read::lost : Read::closed;
  if (sent > 0) {
    const Sent message_sent =
        send_before(compile_socket[0], message, Clock::now() + k_start_limit, [&] { return watch.lost(); });
    if (message_sent == Sent::all) read = read_u64s_within(compile_socket[0], pid, unused, k_start_limit, watch);
    else read = message_sent == Sent::past_deadline || watch.lost() ? Read::lost : Read::closed;
  }
  if (read == Read::all && pid != 0) {
    attempt.launched.pid_ = static_cast<pid_t>(pid);
  } else {
    attempt.failure = read == Read::all ? Failure::refused : read == Read::closed ? Failure::closed : Failure::lost;
  }
  return attempt;  // pid -1: not started (its socket closes with it)
}

void CompileLauncher::recover(const Attempt& attempt) {
  const std::lock_guard lock(mutex_);
  if (attempt.generation != generation_) return;  // another thread replaced it meanwhile
  if (attempt.failure != Failure::lost) {
    // A launcher killed from outside closes its sockets while it exits, a moment before it can be
    // reaped: on a busy machine the failed launch can see the first and waitpid not yet the second. So
    // a launcher that looks alive is given a short while to finish dying before it is taken as alive.
    int status = 0;
    const auto settle = Clock::now() + std::chrono::milliseconds(500);
    while (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == 0) {
      if (Clock::now() >= settle) return;  // alive: the failure was this compile's
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    pid_ = -1;  // reaped just now, or earlier
  } else if (pid_ > 0) {
    // Lost: stopped, deadlocked or silent. Killed now, with whatever it still runs (those compiles are
    // compiled again by their callers), and reaped.
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
    pid_ = -1;
  }
  stop();
  start();
}

LaunchedCompile CompileLauncher::launch(const NvrtcRequest& request, const ChildBudget& budget) {
  std::string head;
  put_u64(head, static_cast<unsigned long long>(budget.cpu.count()));
  put_u64(head, static_cast<unsigned long long>(wall_cap(budget).count()));
  const std::string message = frame(head + encode_request(request));
  {
    Attempt attempt = try_launch(message);
    if (attempt.launched.pid_ > 0) return std::move(attempt.launched);
    // The launcher may be gone: it dies with the thread that made it (PR_SET_PDEATHSIG), or was killed;
    // or stopped answering. A live one that answered is left alone, for its other children are other
    // threads' compiles.
    recover(attempt);
  }
  Attempt again = try_launch(message);
  if (again.launched.pid_ > 0) return std::move(again.launched);
  throw std::runtime_error("leap::sandbox: cannot start a compile child (the compile launcher could not fork one)");
}

LaunchedCompile CompileLauncher::start_pooled_compiler(const std::string& settings, int compiler_socket) {
  const std::string message = frame(settings);
  {
    Attempt attempt = try_start(k_kind_pooled, compiler_socket, message);
    if (attempt.launched.pid_ > 0) return std::move(attempt.launched);
    recover(attempt);  // as for a compile child: a launcher that is gone or lost is replaced, a live one kept
  }
  Attempt again = try_start(k_kind_pooled, compiler_socket, message);
  if (again.launched.pid_ > 0) return std::move(again.launched);
  throw std::runtime_error("leap::sandbox: cannot start a pooled compiler (the compile launcher could not fork one)");
}

}  // namespace leap::sandbox::detail

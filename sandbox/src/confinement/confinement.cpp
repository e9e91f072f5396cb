// SPDX-License-Identifier: Apache-2.0
// sandbox/src/confinement: the OS layers (Landlock, seccomp, the private root, rlimits, process
// hygiene) that a compile child and the GPU runner apply to themselves, and the probe of
// which this machine offers. Not here: what runs confined or when (compile/ and evaluation/ decide),
// nor the include jail (compile/), which explains refusals and guarantees nothing.
//
// Process hygiene, rlimits and the report of which confinement layers this machine offers.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "confinement/confinement.hpp"

extern char** environ;

namespace leap::sandbox {
namespace detail {
namespace {

int set_limit(int resource, rlim_t soft, rlim_t hard) noexcept {
  const rlimit r{soft, hard};
  return ::setrlimit(resource, &r) == 0 ? 0 : errno;
}

void address_space_marker(int sig) {
  // A 64 MiB reservation that no longer fits means the address-space limit is what ended us.
  void* p = ::mmap(nullptr, 64u << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED && errno == ENOMEM) _exit(k_exit_address_space);
  if (p != MAP_FAILED) ::munmap(p, 64u << 20);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

char* k_empty_environment[] = {nullptr};

}  // namespace

std::uint64_t mapped_bytes() noexcept {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128] = {};
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  std::uint64_t pages = 0;
  for (const char* p = buf; *p >= '0' && *p <= '9'; ++p) pages = pages * 10 + static_cast<std::uint64_t>(*p - '0');
  return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

bool die_with_parent(pid_t parent) noexcept {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return false;
  return ::getppid() == parent;  // the parent may have died between fork and prctl
}

void reset_process_state() noexcept {
  ::setpgid(0, 0);
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  environ = k_empty_environment;
}

int keep_only_descriptors(int keep) noexcept {
  if (keep != 3) {
    if (::dup2(keep, 3) < 0) return errno;
  }
  const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null < 0) return errno;
  ::dup2(null, 0);
  ::dup2(null, 1);
  ::fcntl(3, F_SETFD, 0);
  if (::close_range(4, ~0u, 0) != 0) {
    const long max_fd = ::sysconf(_SC_OPEN_MAX);
    for (long fd = 4; fd < max_fd && fd < 65536; ++fd) ::close(static_cast<int>(fd));
  }
  return 0;
}

int apply_limits(const ChildLimits& limits, std::uint64_t inherited) noexcept {
  if (limits.address_space_extra > 0) {
    const rlim_t as = static_cast<rlim_t>(inherited + limits.address_space_extra);
    if (const int e = set_limit(RLIMIT_AS, as, as); e != 0) return e;
  }
  if (limits.cpu_seconds > 0) {
    if (const int e = set_limit(RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1); e != 0) return e;
  }
  if (limits.open_files > 0) {
    if (const int e = set_limit(RLIMIT_NOFILE, limits.open_files, limits.open_files); e != 0) return e;
  }
  const rlim_t file_size = static_cast<rlim_t>(limits.file_size);
  if (const int e = set_limit(RLIMIT_FSIZE, file_size, file_size); e != 0) return e;
  return set_limit(RLIMIT_CORE, 0, 0);
}

void install_address_space_marker() noexcept {
  static char stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = stack;
  ss.ss_size = sizeof stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_handler = &address_space_marker;
  sa.sa_flags = static_cast<int>(SA_ONSTACK | SA_RESETHAND);
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT}) ::sigaction(sig, &sa, nullptr);
}

}  // namespace detail

namespace {

// Tries a private root in a throwaway child: the only way to know that user namespaces, the maps
// and the mounts all work here (containers and sysctls switch them off in several places).
// Its mountpoint is made like every directory the sandbox makes (make_private_dir): a file planted at
// a predictable path cannot make the probe fail, and with it the private root of every compile.
bool probe_private_root(std::string& reason) {
  std::string dir;
  try {
    dir = detail::make_private_dir("probe-root");
  } catch (const std::exception& e) {
    reason = std::string("the probe's mountpoint could not be made (") + e.what() + ")";
    return false;
  }
  detail::PrivateRoot root;
  root.mountpoint = dir;
  root.uid = ::getuid();
  root.gid = ::getgid();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    detail::remove_private_dir(dir, false);
    reason = "pipe failed";
    return false;
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    const char* step = "";
    const int e = detail::enter_private_root(root, step);
    char msg[256];
    const int n = std::snprintf(msg, sizeof msg, "%s: %s", step, e == 0 ? "ok" : std::strerror(e));
    if (n > 0) (void)!::write(fds[1], msg, static_cast<std::size_t>(std::min(n, 255)));
    _exit(e == 0 ? 0 : 1);
  }
  ::close(fds[1]);
  std::string msg;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    msg.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  if (pid > 0) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  }
  detail::remove_private_dir(dir, false);
  if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  reason = pid < 0 ? "fork failed"
                   : "no private mount namespace (" + (msg.empty() ? std::string("the probe died") : msg) +
                         "); user namespaces may be disabled (kernel.unprivileged_userns_clone, "
                         "user.max_user_namespaces, or a container's seccomp profile)";
  return false;
}

}  // namespace

std::vector<std::string> ConfinementSupport::missing_layers() const {
  std::vector<std::string> out;
  if (landlock_abi == 0) out.emplace_back("landlock");
  if (!seccomp) out.emplace_back("seccomp");
  if (!mount_namespace) out.emplace_back("mount namespace");
  return out;
}

std::string ConfinementSupport::missing() const {
  std::string out;
  auto add = [&](const std::string& what) { out += (out.empty() ? "" : "; ") + what; };
  if (landlock_abi == 0) add("Landlock unavailable: " + landlock_reason);
  if (!seccomp) add("seccomp unavailable: " + seccomp_reason);
  if (!mount_namespace) add("mount namespace unavailable: " + mount_namespace_reason);
  return out;
}

namespace detail {

ConfinementSupport probe_confinement() {
  ConfinementSupport support;
  support.landlock_abi = landlock_abi();
  if (support.landlock_abi == 0) {
    const int e = landlock_errno();
    support.landlock_reason =
        e == EOPNOTSUPP ? "Landlock is built into the kernel but not enabled (add landlock to the lsm= boot parameter)"
        : e == ENOSYS   ? "the kernel has no Landlock (Linux >= 5.13 with CONFIG_SECURITY_LANDLOCK)"
                        : std::string("landlock_create_ruleset failed: ") + std::strerror(e);
  }
  support.seccomp = seccomp_available(support.seccomp_reason);
  support.mount_namespace = probe_private_root(support.mount_namespace_reason);
  return support;
}

namespace {
ConfinementSupport& cached_support() {
  static ConfinementSupport support;
  return support;
}
std::once_flag& probed_once() {
  static std::once_flag once;
  return once;
}
}  // namespace

void reprobe_confinement_for_tests() {
  std::call_once(probed_once(), [] {});  // a later confinement_support() must not probe over this answer
  cached_support() = probe_confinement();
}

}  // namespace detail

const ConfinementSupport& confinement_support() {
  std::call_once(detail::probed_once(), [] { detail::cached_support() = detail::probe_confinement(); });
  return detail::cached_support();
}

std::string landlock_abi_features(int abi) {
  if (abi <= 0) return "none";
  std::string s = "filesystem";
  if (abi >= 2) s += ", refer";
  if (abi >= 3) s += ", truncate";
  if (abi >= 4) s += ", TCP bind/connect";
  if (abi >= 5) s += ", device ioctl";
  if (abi >= 6) s += ", scoped signals and abstract sockets";
  return s;
}

std::vector<ConfinementLayer> describe_confinement(const ConfinementLimits& limits) {
  const ConfinementSupport& s = confinement_support();
  std::vector<ConfinementLayer> layers;
  layers.push_back(
      {"landlock", s.landlock_abi > 0,
       s.landlock_abi > 0
           ? "ABI " + std::to_string(s.landlock_abi) + " (" + landlock_abi_features(s.landlock_abi) +
                 "): the toolkit's headers read-only, nothing else readable, nothing writable or executable"
           : s.landlock_reason});
  layers.push_back(
      {"seccomp", s.seccomp,
       s.seccomp
           ? "kills exec, sockets, ptrace, mount, namespaces, bpf, perf, userfaultfd, keyrings, modules, io_uring; "
             "threads only"
           : s.seccomp_reason});
  layers.push_back({"mount namespace", s.mount_namespace,
                    s.mount_namespace
                        ? "a private root holding only the toolkit's headers: a host file is missing, not forbidden"
                        : s.mount_namespace_reason +
                              "; untrusted compiles are refused unless the caller accepts the "
                              "weaker set, and then the log filter makes every file that cannot be "
                              "opened read the same"});
  layers.push_back({"rlimits", true,
                    "address space +" + std::to_string(limits.address_space_bytes >> 20) +
                        " MiB, CPU = the compile's time limit, " + std::to_string(limits.max_open_files) +
                        " open files, file size 0, no core dumps"});
  layers.push_back({"process", true,
                    "dies with its parent, own process group, empty environment, only its result pipe open, "
                    "working directory empty"});
  return layers;
}

}  // namespace leap::sandbox

// SPDX-License-Identifier: Apache-2.0
// A private root for the compile child: a new user and mount namespace whose root is an empty tmpfs
// with only the toolkit's headers bound in, read-only. Landlock alone answers "Permission denied" for
// a host file and "No such file" for a missing one, which tells a candidate what exists; here both
// are simply absent.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/sanitizer_build.hpp"
#include "confinement/confinement.hpp"

// ThreadSanitizer keeps a background thread in every process, forked children included, and a
// process with two threads may not create a user namespace (EINVAL). Its runtime stops that thread
// when told that the process is about to sandbox itself, but it learns how only once the process has
// started a thread of its own: a process that forks before that gets children it cannot stop.
#ifdef LEAP_SANDBOX_UNDER_TSAN
#include <sanitizer/common_interface_defs.h>

#include <thread>

namespace {
const bool g_sanitizer_knows_how_to_stop = [] {
  std::thread([] {}).join();
  return true;
}();
}  // namespace
#endif

namespace leap::sandbox::detail {
namespace {

int write_file(const char* path, const char* text) noexcept {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const std::size_t n = std::strlen(text);
  const ssize_t w = ::write(fd, text, n);
  const int e = errno;
  ::close(fd);
  return w == static_cast<ssize_t>(n) ? 0 : (w < 0 ? e : EIO);
}

// mkdir -p for an absolute path; `buf` is scratch of PATH_MAX bytes (no allocation in the child).
int make_dirs(const char* path, char* buf, std::size_t cap) noexcept {
  const std::size_t n = std::strlen(path);
  if (n + 1 > cap) return ENAMETOOLONG;
  std::memcpy(buf, path, n + 1);
  for (std::size_t i = 1; i <= n; ++i) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    const char saved = buf[i];
    buf[i] = '\0';
    if (::mkdir(buf, 0755) != 0 && errno != EEXIST) return errno;
    buf[i] = saved;
  }
  return 0;
}

// Read-only remount of a bind mount, keeping the flags a user namespace may not drop.
void remount_read_only(const char* path) noexcept {
  struct statvfs sv {};
  unsigned long flags = MS_BIND | MS_REMOUNT | MS_RDONLY;
  if (::statvfs(path, &sv) == 0) {
    if (sv.f_flag & ST_NOSUID) flags |= MS_NOSUID;
    if (sv.f_flag & ST_NODEV) flags |= MS_NODEV;
    if (sv.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
    if (sv.f_flag & ST_NOATIME) flags |= MS_NOATIME;
    if (sv.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
    if (sv.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  }
  ::mount(nullptr, path, nullptr, flags, nullptr);  // best effort: Landlock forbids writing anyway
}

}  // namespace

int enter_private_root(const PrivateRoot& root, const char*& step) noexcept {
  char map[64];
#ifdef LEAP_SANDBOX_UNDER_TSAN
  __sanitizer_sandbox_on_notify(nullptr);
#endif
  step = "unshare(user, mount)";
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return errno;
  step = "write /proc/self/setgroups";
  if (const int e = write_file("/proc/self/setgroups", "deny"); e != 0 && e != ENOENT) return e;
  step = "write /proc/self/uid_map";
  std::snprintf(map, sizeof map, "0 %u 1\n", static_cast<unsigned>(root.uid));
  if (const int e = write_file("/proc/self/uid_map", map); e != 0) return e;
  step = "write /proc/self/gid_map";
  std::snprintf(map, sizeof map, "0 %u 1\n", static_cast<unsigned>(root.gid));
  if (const int e = write_file("/proc/self/gid_map", map); e != 0) return e;
  step = "make / private";
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return errno;
  step = "mount tmpfs";
  const char* base = root.mountpoint.c_str();
  if (::mount("leap-root", base, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=1m,mode=0755") != 0) return errno;
  char target[4096], scratch[4096];
  for (const PrivateRoot::Bind& b : root.binds) {
    step = "bind the toolkit headers";
    if (std::snprintf(target, sizeof target, "%s%s", base, b.target.c_str()) >= static_cast<int>(sizeof target)) {
      return ENAMETOOLONG;
    }
    if (const int e = make_dirs(target, scratch, sizeof scratch); e != 0) return e;
    if (::mount(b.source.c_str(), target, nullptr, MS_BIND | MS_REC, nullptr) != 0) return errno;
    remount_read_only(target);
  }
  if (!root.scratch.empty()) {
    step = "mount the scratch tmpfs";
    char options[64];
    std::snprintf(options, sizeof options, "size=%llu,mode=0700", static_cast<unsigned long long>(root.scratch_bytes));
    if (std::snprintf(target, sizeof target, "%s%s", base, root.scratch.c_str()) >= static_cast<int>(sizeof target)) {
      return ENAMETOOLONG;
    }
    if (const int e = make_dirs(target, scratch, sizeof scratch); e != 0) return e;
    if (!root.scratch_source.empty()) {
      step = "bind the scratch directory";
      if (::mount(root.scratch_source.c_str(), target, nullptr, MS_BIND, nullptr) != 0) return errno;
    } else if (::mount("leap-scratch", target, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, options) != 0) {
      return errno;
    }
  }
  step = "pivot_root";
  std::snprintf(target, sizeof target, "%s/.old", base);
  if (::mkdir(target, 0700) != 0) return errno;
  if (::syscall(SYS_pivot_root, base, target) != 0) return errno;
  step = "chdir /";
  if (::chdir("/") != 0) return errno;
  step = "detach the old root";
  if (::umount2("/.old", MNT_DETACH) != 0) return errno;
  ::rmdir("/.old");
  // The new root itself read-only: nothing in it may be created or changed.
  ::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
  step = "";
  return 0;
}

}  // namespace leap::sandbox::detail

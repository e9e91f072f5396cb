// SPDX-License-Identifier: Apache-2.0
// The directories the sandbox makes on the host (the private root's probe and mountpoint, a compile
// compiler's scratch directory without a private root). A predictable name in a shared directory lets
// anyone plant a file, a link or a directory there first, and a mount on a planted file fails: the
// private root would be lost without a word. So every one is made by mkdtemp (a random name,
// created exclusively) inside a base directory of this process's own, itself made by mkdtemp with
// mode 0700 and checked with lstat before each use.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "confinement/confinement.hpp"

namespace leap::sandbox::detail {
namespace {

struct Base {
  std::mutex mutex;
  pid_t owner = 0;  // the process that made it: a forked child makes its own
  std::string path;
  unsigned directories = 0;  // made in it and not yet removed; the base goes with the last one
};

Base& base() {
  static Base* b = new Base;  // never destroyed: directories may be removed from other static destructors
  return *b;
}

[[noreturn]] void cannot(const std::string& what, const std::string& where, int error) {
  throw std::runtime_error("leap::sandbox: cannot make " + what + " under " + where + ": " + std::strerror(error) +
                           " (set TMPDIR to a writable directory)");
}

// Ours alone: a directory (not a link to one), owned by us, mode 0700.
bool ours_alone(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
         (st.st_mode & 07777) == 0700;
}

}  // namespace

std::string make_private_dir(std::string_view purpose) {
  Base& b = base();
  std::lock_guard lock(b.mutex);
  if (b.owner != ::getpid() || b.path.empty()) {
    std::error_code ec;
    const std::string tmp = std::filesystem::temp_directory_path(ec).string();
    if (ec) cannot("the sandbox's private directory", "$TMPDIR", ec.value());
    std::string pattern = tmp + "/leap-sandbox-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) cannot("the sandbox's private directory", tmp, errno);
    b.owner = ::getpid();
    b.path = pattern;
    b.directories = 0;
  }
  if (!ours_alone(b.path)) {
    throw std::runtime_error("leap::sandbox: " + b.path +
                             " is no longer a directory of this process's own (mode 0700); "
                             "something changed it, so nothing more is made in it");
  }
  std::string pattern = b.path + "/" + std::string(purpose) + "-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) cannot("a directory for " + std::string(purpose), b.path, errno);
  ++b.directories;
  return pattern;
}

void remove_private_dir(const std::string& path, bool contents) noexcept {
  if (path.empty()) return;
  if (contents) {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  } else {
    ::rmdir(path.c_str());
  }
  Base& b = base();
  std::lock_guard lock(b.mutex);
  if (b.owner != ::getpid() || b.path.empty() || !path.starts_with(b.path + "/")) return;
  if (b.directories > 0 && --b.directories == 0) {
    ::rmdir(b.path.c_str());
    b.path.clear();
  }
}

}  // namespace leap::sandbox::detail

// SPDX-License-Identifier: Apache-2.0
// Key files: read under one set of rules (regular, the reader's own, private, bounded, never blocking),
// and a private directory's MAC key made once, atomically.
#include "common/key_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/fd_io.hpp"
#include "common/unique_fd.hpp"

namespace leap::sandbox::detail {
namespace {

const char* kind_of(mode_t mode) noexcept {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a plain file";
}

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Rules 2 to 5 of key_file.hpp on what stat or fstat said.
void check_status(const struct stat& st, const std::string& path, const KeyFileRules& rules) {
  const auto refuse = [&](std::string problem, std::string fix) {
    throw KeyFileError(rules.label, path, std::move(problem), std::move(fix));
  };
  if (!S_ISREG(st.st_mode)) {
    if (S_ISLNK(st.st_mode)) refuse("is a symbolic link", "put the file itself in its place");
    refuse(std::string("is ") + kind_of(st.st_mode) + ", not a regular file", "name a regular file that holds the key");
  }
  const uid_t me = ::geteuid();
  if (st.st_uid != me) {
    refuse("is owned by uid " + std::to_string(st.st_uid) + ", not by this process's user (uid " + std::to_string(me) +
               "), who could then read or replace the key",
           "give it to this user: chown " + std::to_string(me) + " " + path + " (or run as its owner)");
  }
  if ((st.st_mode & 077) != 0) {
    refuse(std::string((st.st_mode & 044) != 0 ? "may be read by group or others" : "gives group or others access") +
               " (mode " + octal_mode(st.st_mode) + ")",
           "make it private: chmod 600 " + path);
  }
  if (static_cast<std::uint64_t>(st.st_size) > rules.max_bytes) {
    refuse("is " + std::to_string(st.st_size) + " bytes; a key file holds one key (at most " +
               std::to_string(rules.max_bytes) + " bytes)",
           "put the key alone in it");
  }
}

}  // namespace

KeyFileError::KeyFileError(std::string_view label, std::string path, std::string problem, std::string fix)
    : std::runtime_error(std::string(label) + " " + path + " " + problem + "; " + fix),
      path_(std::move(path)),
      problem_(std::move(problem)),
      fix_(std::move(fix)) {}

std::size_t read_key_file(int dir_fd, const std::string& path, const KeyFileRules& rules, char* buffer,
                          std::size_t capacity) {
  const auto refuse = [&](std::string problem, std::string fix) {
    throw KeyFileError(rules.label, path, std::move(problem), std::move(fix));
  };
  const auto cannot_open = [&](int error) {
    if (error == ENOENT) {
      refuse("does not exist", rules.how_to_make.empty() ? "check the path" : std::string(rules.how_to_make));
    }
    if (error == ELOOP && !rules.follow_symlinks) refuse("is a symbolic link", "put the file itself in its place");
    if (error == EACCES) {
      refuse(
          "cannot be opened by this process's user (uid " + std::to_string(::geteuid()) + "): " + std::strerror(error),
          "give it to this user: chown " + std::to_string(::geteuid()) + " " + path + " && chmod 600 " + path);
    }
    refuse(std::string("cannot be opened: ") + std::strerror(error), "check the path");
  };
  // Looked at before it is opened: opening a device or a FIFO may itself do something.
  struct stat st {};
  if (::fstatat(dir_fd, path.c_str(), &st, rules.follow_symlinks ? 0 : AT_SYMLINK_NOFOLLOW) != 0) cannot_open(errno);
  check_status(st, path, rules);
  // And checked again once open, on what was opened: the name may have been replaced meanwhile.
  const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (rules.follow_symlinks ? 0 : O_NOFOLLOW);
  const UniqueFd fd(::openat(dir_fd, path.c_str(), flags));
  if (!fd) cannot_open(errno);
  if (::fstat(fd.get(), &st) != 0) refuse(std::string("cannot be read: ") + std::strerror(errno), "check the file");
  check_status(st, path, rules);
  if (capacity <= rules.max_bytes) throw std::logic_error("leap::sandbox::detail::read_key_file: buffer too small");
  std::size_t size = 0;
  while (size < capacity) {
    const ssize_t n = ::read(fd.get(), buffer + size, capacity - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse(std::string("cannot be read: ") + std::strerror(errno), "check the file");
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
  }
  if (size > rules.max_bytes) {
    refuse("grew past " + std::to_string(rules.max_bytes) + " bytes while it was read; a key file holds one key",
           "put the key alone in it");
  }
  return size;
}

std::optional<std::string> load_or_create_key_file(int dir_fd, const char* name, std::size_t bytes,
                                                   std::string_view remedy, std::string& why) {
  static std::atomic<unsigned long long> tmp_counter{0};
  struct stat st {};
  if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT) {
    std::string key(bytes, '\0');
    for (std::size_t got = 0; got < key.size();) {
      const ssize_t n = ::getrandom(key.data() + got, key.size() - got, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        why = "cannot get random bytes for its MAC key";
        return std::nullopt;
      }
      got += static_cast<std::size_t>(n);
    }
    const std::string tmp = ".tmp-key-" + std::to_string(::getpid()) + "-" + std::to_string(tmp_counter++);
    const int out = ::openat(dir_fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    const bool written = out >= 0 && write_all(out, key) && ::fsync(out) == 0;
    if (out >= 0) ::close(out);
    const int linked = written ? ::linkat(dir_fd, tmp.c_str(), dir_fd, name, 0) : -1;
    const int link_errno = errno;
    if (out >= 0) ::unlinkat(dir_fd, tmp.c_str(), 0);
    if (!written || (linked != 0 && link_errno != EEXIST)) {
      why = "cannot hold a MAC key file";
      return std::nullopt;
    }
  }
  std::string key(bytes + 1, '\0');
  try {
    const std::size_t size = read_key_file(
        dir_fd, name, {.label = "MAC key file", .max_bytes = bytes, .follow_symlinks = false}, key.data(), key.size());
    if (size != bytes) {
      why = std::string("has a MAC key file ") + name + " of " + std::to_string(size) + " bytes, not " +
            std::to_string(bytes) + "; " + std::string(remedy);
      return std::nullopt;
    }
  } catch (const KeyFileError& e) {
    why = std::string("has a MAC key file ") + name + " that " + e.problem() + "; " + std::string(remedy);
    return std::nullopt;
  }
  key.resize(bytes);
  return key;
}

}  // namespace leap::sandbox::detail

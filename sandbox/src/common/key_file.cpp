// SPDX-License-Identifier: Apache-2.0
// The MAC key file of a private directory: made once, atomically, then read and checked by each user.
#include "common/key_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/fd_io.hpp"

namespace leap::sandbox::detail {

std::optional<std::string> load_or_create_key_file(int dir_fd, const char* name, std::size_t bytes,
                                                   std::string_view remedy, std::string& why) {
  static std::atomic<unsigned long long> tmp_counter{0};
  int fd = ::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
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
    fd = ::openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  }
  if (fd < 0) {
    why = std::string("has an unreadable MAC key file ") + name + ": " + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0 ||
      st.st_size != static_cast<off_t>(bytes)) {
    ::close(fd);
    why = std::string("has a MAC key file ") + name + " that is not a 0600 file of " + std::to_string(bytes) +
          " bytes owned by you; " + std::string(remedy);
    return std::nullopt;
  }
  std::optional<std::string> key = read_regular(fd, bytes);
  ::close(fd);
  if (!key || key->size() != bytes) {
    why = std::string("has an unreadable MAC key file ") + name;
    return std::nullopt;
  }
  return key;
}

}  // namespace leap::sandbox::detail

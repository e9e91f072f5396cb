// SPDX-License-Identifier: Apache-2.0
// Whole writes to a file descriptor, whole reads of a bounded regular file, directory listings.
#include "common/fd_io.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace leap::sandbox::detail {

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::optional<std::string> read_regular(int fd, std::size_t limit, ReadFailure* failure) {
  auto fail = [failure](ReadFailure::Kind kind, std::uint64_t size, int error) -> std::optional<std::string> {
    if (failure != nullptr) *failure = ReadFailure{kind, size, error};
    return std::nullopt;
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(ReadFailure::Kind::read_error, 0, errno);
  if (!S_ISREG(st.st_mode)) return fail(ReadFailure::Kind::not_regular, 0, 0);
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > limit) return fail(ReadFailure::Kind::too_large, size, 0);
  std::string data(static_cast<std::size_t>(size), '\0');
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::pread(fd, data.data() + done, data.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(ReadFailure::Kind::read_error, size, errno);
    if (n == 0) return fail(ReadFailure::Kind::shrank, size, 0);  // shrank underneath us
    done += static_cast<std::size_t>(n);
  }
  return data;
}

std::vector<std::string> list_directory(int dir_fd) {
  std::vector<std::string> names;
  const int copy = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (copy < 0) return names;
  DIR* d = ::fdopendir(copy);  // owns `copy` from here
  if (d == nullptr) {
    ::close(copy);
    return names;
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string_view n(e->d_name);
    if (n != "." && n != "..") names.emplace_back(n);
  }
  ::closedir(d);
  return names;
}

}  // namespace leap::sandbox::detail

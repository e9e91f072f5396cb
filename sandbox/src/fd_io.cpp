// SPDX-License-Identifier: Apache-2.0
// Whole writes to a file descriptor, shared by the cache, the compile child and the worker frames.
#include <unistd.h>

#include <cerrno>

#include "detail.hpp"

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

}  // namespace leap::sandbox::detail

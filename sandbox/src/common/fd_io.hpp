// SPDX-License-Identifier: Apache-2.0
// Whole writes to a descriptor, whole reads of a bounded regular file, and directory listings: the
// descriptor I/O the cache, the compile child, the worker frames, the stored PCHs, the fleet key and the
// task files share. Nothing here decides what a file may be; the callers open it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leap::sandbox::detail {

// Writes all of `data` to `fd`, retrying short writes and EINTR; false on any other failure. Only
// write(2) is called, so a forked child may use it before it execs or exits.
bool write_all(int fd, std::string_view data);

// Why read_regular gave nothing, for a caller that says so in words.
struct ReadFailure {
  enum class Kind { not_regular, too_large, read_error, shrank };
  Kind kind = Kind::read_error;
  std::uint64_t size = 0;  // the file's size as fstat gave it (too_large)
  int error = 0;           // errno (read_error)
};

// Reads the whole of `fd`, a regular file of at most `limit` bytes (as fstat says when it starts);
// nullopt for anything else, a read error, or a file that shrank while read, with the reason in
// `failure` when one is given. It reads the size fstat gave and no more, so a file that grows while
// read cannot push it past `limit`.
std::optional<std::string> read_regular(int fd, std::size_t limit, ReadFailure* failure = nullptr);

// The names in a directory (without "." and ".."); empty when it cannot be read.
std::vector<std::string> list_directory(int dir_fd);

}  // namespace leap::sandbox::detail

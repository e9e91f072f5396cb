// SPDX-License-Identifier: Apache-2.0
// Confined reading of the files a spec names: a spec comes from users and its "reference_file" must
// not become a way to read /etc/passwd or a key beside it. A name is resolved beneath the spec's
// directory by the kernel (openat2 RESOLVE_BENEATH), or by comparing real paths where openat2 is
// missing; only a regular file of at most k_max_task_spec_bytes is read, and a refusal names the file,
// never its contents.
#include "leap/sandbox/task.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <utility>

#include "common/fd_io.hpp"
#include "common/shortened.hpp"
#include "common/unique_fd.hpp"

namespace leap::sandbox {
namespace {

// Reads a spec or a file it names from an open descriptor; the message says what is wrong with it.
std::string read_task_file(int fd, const std::string& shown_name) {
  detail::ReadFailure failure;
  std::optional<std::string> text = detail::read_regular(fd, k_max_task_spec_bytes, &failure);
  if (text) return std::move(*text);
  switch (failure.kind) {
    case detail::ReadFailure::Kind::not_regular: throw TaskError("\"" + shown_name + "\" is not a regular file");
    case detail::ReadFailure::Kind::too_large:
      throw TaskError("\"" + shown_name + "\" is " + std::to_string(failure.size) + " bytes, over the limit of " +
                      std::to_string(k_max_task_spec_bytes));
    case detail::ReadFailure::Kind::shrank: throw TaskError("\"" + shown_name + "\" shrank while it was read");
    case detail::ReadFailure::Kind::read_error: break;
  }
  throw TaskError("cannot read \"" + shown_name + "\": " + std::strerror(failure.error));
}

}  // namespace

FileResolver confined_resolver(std::filesystem::path directory) {
  return [dir = std::move(directory)](std::string_view name) -> std::optional<std::string> {
    const std::string n(name);
    const std::string shown_name = detail::shortened(n, 80, 60);
    const std::string rule =
        " (a file named in a spec must lie in the spec's directory: no absolute path, no '..', "
        "no symlink leading out)";
    if (n.empty() || n.find('\0') != std::string::npos) throw TaskError("an empty or malformed file name");
    const std::filesystem::path rel(n);
    if (rel.is_absolute()) throw TaskError("\"" + shown_name + "\" is an absolute path" + rule);
    for (const std::filesystem::path& part : rel) {
      if (part == "..") throw TaskError("\"" + shown_name + "\" contains '..'" + rule);
    }
    const detail::UniqueFd dir_fd{::open(dir.empty() ? "." : dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)};
    if (!dir_fd) throw TaskError("cannot open the spec's directory: " + std::string(std::strerror(errno)));
    // The kernel resolves the name beneath the directory and refuses any step (a symlink, a mount
    // crossing through "..") that would leave it. O_NONBLOCK: a FIFO must not hang the reader.
    open_how how{};
    how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    detail::UniqueFd file{static_cast<int>(::syscall(SYS_openat2, dir_fd.get(), n.c_str(), &how, sizeof how))};
    if (!file && (errno == ENOSYS || errno == EPERM)) {
      // Kernels before 5.6 (or a seccomp filter without openat2): compare real paths, and open
      // the checked path without following a final symlink.
      std::error_code ec;
      const std::filesystem::path base = std::filesystem::canonical(dir.empty() ? "." : dir, ec);
      const std::filesystem::path real = std::filesystem::weakly_canonical(base / rel, ec);
      const auto [end, _] = std::mismatch(base.begin(), base.end(), real.begin(), real.end());
      if (ec || end != base.end()) throw TaskError("\"" + shown_name + "\" leads out of the spec's directory" + rule);
      file.reset(::open(real.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW));
    }
    if (!file) {
      if (errno == EXDEV || errno == ELOOP)
        throw TaskError("\"" + shown_name + "\" leads out of the spec's directory" + rule);
      if (errno == ENOENT) return std::nullopt;
      throw TaskError("cannot open \"" + shown_name + "\": " + std::strerror(errno));
    }
    return read_task_file(file.get(), shown_name);
  };
}

TaskSpec load_task_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) throw TaskError("cannot read task spec " + path + ": " + std::strerror(errno));
  const detail::UniqueFd owner{fd};
  std::string text;
  try {
    text = read_task_file(fd, path);
  } catch (const TaskError& e) {
    throw TaskError(std::string("task spec: ") + e.what());
  }
  return parse_task(text, confined_resolver(std::filesystem::path(path).parent_path()));
}

}  // namespace leap::sandbox

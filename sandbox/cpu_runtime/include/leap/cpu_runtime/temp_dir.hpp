// SPDX-License-Identifier: Apache-2.0
// A private directory under $TMPDIR (or /tmp) for headers written out at run time.
#pragma once

#include <sys/types.h>

#include <filesystem>

namespace leap::cpu_runtime {

// Made with mkdtemp and removed when the object goes, by the process that made it only: a forked child
// that exits through the static destructors leaves its parent's directory alone.
class TempDir {
 public:
  // Throws std::runtime_error naming the pattern and the reason when the directory cannot be made.
  explicit TempDir(const char* stem);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  pid_t owner_;
  std::filesystem::path path_;
};

}  // namespace leap::cpu_runtime

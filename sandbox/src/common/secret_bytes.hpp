// SPDX-License-Identifier: Apache-2.0
// Secrets in memory that no forked child gets. The fleet key and the Redis password live in pages of
// their own that the kernel hands a forked child zero-filled (MADV_WIPEONFORK; not at all, on a kernel
// before 4.14: MADV_DONTFORK), that core dumps leave out (MADV_DONTDUMP), that stay out of swap where
// the memory-lock limit allows (mlock), and that are zeroed before they are given back. So a process
// forked from one holding a secret (the compile launcher, which forks the pooled compilers and the
// compile children: the processes where NVRTC parses hostile source) never holds it, whenever it is
// forked. A program exec'ed with an explicit environment (the GPU runner) never had it either.
//
// What this cannot see are copies made elsewhere: read a secret straight into SecretBytes (read(2),
// a copy out of the environment block), never through a std::string, and wipe whatever scratch held it
// (hmac_sha256 does).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string_view>

namespace leap::sandbox::detail {

class SecretBytes {
 public:
  // Room for `capacity` bytes, size() 0. Throws std::bad_alloc when no page can be mapped.
  explicit SecretBytes(std::size_t capacity);
  ~SecretBytes();  // zeroes the bytes (in the process that made them) and unmaps them
  SecretBytes(const SecretBytes&) = delete;
  SecretBytes& operator=(const SecretBytes&) = delete;

  char* data() noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return capacity_; }
  void resize(std::size_t size) noexcept;  // at most capacity()

  // The bytes. Throws std::logic_error in a forked child of the process that made them: they are
  // zeros or unmapped there.
  std::string_view view() const;
  // Whether a forked child gets zeros (MADV_WIPEONFORK) rather than no mapping at all (MADV_DONTFORK).
  bool wiped_on_fork() const noexcept { return wiped_on_fork_; }

 private:
  char* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::size_t mapped_ = 0;
  pid_t owner_ = 0;
  bool wiped_on_fork_ = false;
  bool locked_ = false;
};

// A copy of `bytes` in secret memory.
std::shared_ptr<SecretBytes> secret_copy(std::string_view bytes);

// The value of the environment variable `name` copied into secret memory, or nullptr when it is not
// set. With `scrub`, its bytes in the environment are then overwritten with zeros and the variable is
// unset: /proc/<pid>/environ of this process, and of every process forked from it later, no longer
// shows it. Like setenv, not safe while another thread reads the environment.
std::shared_ptr<SecretBytes> environment_secret(const char* name, bool scrub);

}  // namespace leap::sandbox::detail

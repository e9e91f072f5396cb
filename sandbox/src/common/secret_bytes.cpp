// SPDX-License-Identifier: Apache-2.0
// Secret memory: pages that a forked child does not inherit, left out of core dumps, zeroed when freed.
#include "common/secret_bytes.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <stdexcept>

namespace leap::sandbox::detail {

SecretBytes::SecretBytes(std::size_t capacity) : capacity_(capacity), owner_(::getpid()) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  mapped_ = (capacity == 0 ? 1 : (capacity + page - 1) / page) * page;
  void* p = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<char*>(p);
#ifdef MADV_WIPEONFORK
  wiped_on_fork_ = ::madvise(p, mapped_, MADV_WIPEONFORK) == 0;
#endif
  if (!wiped_on_fork_ && ::madvise(p, mapped_, MADV_DONTFORK) != 0) {
    ::munmap(p, mapped_);
    throw std::bad_alloc();  // no way to keep it from a forked child: hold no secret here at all
  }
  (void)::madvise(p, mapped_, MADV_DONTDUMP);
  locked_ = ::mlock(p, mapped_) == 0;  // best effort: RLIMIT_MEMLOCK may be small
}

SecretBytes::~SecretBytes() {
  // In a forked child the pages are zeros (or not mapped at all): touch nothing but the mapping.
  if (::getpid() == owner_) {
    ::explicit_bzero(data_, mapped_);
    if (locked_) ::munlock(data_, mapped_);
  }
  ::munmap(data_, mapped_);
}

void SecretBytes::resize(std::size_t size) noexcept {
  if (size > capacity_) size = capacity_;
  if (size < size_) ::explicit_bzero(data_ + size, size_ - size);
  size_ = size;
}

std::string_view SecretBytes::view() const {
  if (::getpid() != owner_) {
    throw std::logic_error("leap::sandbox: a secret (the fleet key or the Redis password) was read in process " +
                           std::to_string(owner_) + " and is used in process " + std::to_string(::getpid()) +
                           ", a fork of it; secrets are not handed to forked children. Read it again in the child");
  }
  return {data_, size_};
}

std::shared_ptr<SecretBytes> secret_copy(std::string_view bytes) {
  auto secret = std::make_shared<SecretBytes>(bytes.size());
  std::memcpy(secret->data(), bytes.data(), bytes.size());
  secret->resize(bytes.size());
  return secret;
}

std::shared_ptr<SecretBytes> environment_secret(const char* name, bool scrub) {
  char* value = std::getenv(name);
  if (value == nullptr) return nullptr;
  const std::size_t length = std::strlen(value);
  std::shared_ptr<SecretBytes> secret = secret_copy(std::string_view(value, length));
  if (scrub) {
    // The bytes first: unsetenv only drops the pointer, and the string stays where it was (for the
    // environment a program starts with, in the block /proc/<pid>/environ shows).
    ::explicit_bzero(value, length);
    ::unsetenv(name);
  }
  return secret;
}

}  // namespace leap::sandbox::detail

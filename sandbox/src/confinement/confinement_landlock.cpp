// SPDX-License-Identifier: Apache-2.0
// Landlock with whatever ABI the running kernel offers. Debian 12's headers stop at ABI 2, so the
// structures and the later access rights are spelled out here from the kernel's UAPI.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "confinement/confinement.hpp"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

namespace leap::sandbox::detail {
namespace {

struct RulesetAttr {  // struct landlock_ruleset_attr as of ABI 6; older kernels are given a prefix
  std::uint64_t handled_access_fs = 0;
  std::uint64_t handled_access_net = 0;  // ABI >= 4
  std::uint64_t scoped = 0;              // ABI >= 6
};
struct __attribute__((packed)) PathBeneath {  // struct landlock_path_beneath_attr
  std::uint64_t allowed_access = 0;
  std::int32_t parent_fd = -1;
};

constexpr std::uint32_t k_create_ruleset_version = 1u << 0;
constexpr int k_rule_path_beneath = 1;

// Filesystem rights by the ABI that introduced them.
constexpr std::uint64_t k_fs_execute = 1ull << 0;
constexpr std::uint64_t k_fs_write_file = 1ull << 1;
constexpr std::uint64_t k_fs_read_file = 1ull << 2;
constexpr std::uint64_t k_fs_read_dir = 1ull << 3;
constexpr std::uint64_t k_fs_remove_dir = 1ull << 4;
constexpr std::uint64_t k_fs_remove_file = 1ull << 5;
constexpr std::uint64_t k_fs_make_dir = 1ull << 7;
constexpr std::uint64_t k_fs_make_reg = 1ull << 8;
constexpr std::uint64_t k_fs_abi1 = (1ull << 13) - 1;  // execute .. make_sym
constexpr std::uint64_t k_fs_refer = 1ull << 13;       // ABI 2
constexpr std::uint64_t k_fs_truncate = 1ull << 14;    // ABI 3
constexpr std::uint64_t k_fs_ioctl_dev = 1ull << 15;   // ABI 5
constexpr std::uint64_t k_net_bind_tcp = 1ull << 0;    // ABI 4
constexpr std::uint64_t k_net_connect_tcp = 1ull << 1;
constexpr std::uint64_t k_scope_abstract_unix_socket = 1ull << 0;  // ABI 6
constexpr std::uint64_t k_scope_signal = 1ull << 1;

std::uint64_t handled_fs(int abi) noexcept {
  std::uint64_t fs = k_fs_abi1;
  if (abi >= 2) fs |= k_fs_refer;
  if (abi >= 3) fs |= k_fs_truncate;
  if (abi >= 5) fs |= k_fs_ioctl_dev;
  return fs;
}

// Rights that apply to a file (not a directory) as a rule's target.
constexpr std::uint64_t k_file_rights =
    k_fs_execute | k_fs_write_file | k_fs_read_file | k_fs_truncate | k_fs_ioctl_dev;

int probe(int& error) noexcept {
  const long abi = ::syscall(__NR_landlock_create_ruleset, nullptr, 0, k_create_ruleset_version);
  error = abi < 0 ? errno : 0;
  return abi < 0 ? 0 : static_cast<int>(abi);
}

}  // namespace

int landlock_abi() noexcept {
  int error = 0;
  return probe(error);
}

int landlock_errno() noexcept {
  int error = 0;
  probe(error);
  return error;
}

int apply_landlock(const LandlockPlan& plan, int abi) noexcept {
  if (abi <= 0) return ENOSYS;
  RulesetAttr attr;
  attr.handled_access_fs = handled_fs(abi);
  std::size_t size = sizeof attr.handled_access_fs;
  if (abi >= 4) {
    attr.handled_access_net = k_net_bind_tcp | k_net_connect_tcp;
    size += sizeof attr.handled_access_net;
  }
  if (abi >= 6) {
    attr.scoped = k_scope_abstract_unix_socket | k_scope_signal;
    size += sizeof attr.scoped;
  }
  const long ruleset = ::syscall(__NR_landlock_create_ruleset, &attr, size, 0);
  if (ruleset < 0) return errno;
  const int ruleset_fd = static_cast<int>(ruleset);
  const std::uint64_t read = k_fs_read_file | k_fs_read_dir;
  const std::uint64_t write = k_fs_write_file | (abi >= 3 ? k_fs_truncate : 0) | (abi >= 5 ? k_fs_ioctl_dev : 0);
  const std::uint64_t create = k_fs_remove_dir | k_fs_remove_file | k_fs_make_dir | k_fs_make_reg;
  for (const LandlockRule& rule : plan.rules) {
    const int fd = ::open(rule.path.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) continue;  // a path that is not there grants nothing
    struct stat st {};
    const bool is_dir = ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
    PathBeneath beneath;
    beneath.allowed_access = (read | (rule.write ? write : 0) | (rule.create ? create : 0)) & attr.handled_access_fs;
    if (!is_dir) beneath.allowed_access &= k_file_rights;
    beneath.parent_fd = fd;
    const long rc = ::syscall(__NR_landlock_add_rule, ruleset_fd, k_rule_path_beneath, &beneath, 0);
    const int e = errno;
    ::close(fd);
    if (rc != 0) {
      ::close(ruleset_fd);
      return e;
    }
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    const int e = errno;
    ::close(ruleset_fd);
    return e;
  }
  const long rc = ::syscall(__NR_landlock_restrict_self, ruleset_fd, 0);
  const int e = errno;
  ::close(ruleset_fd);
  return rc == 0 ? 0 : e;
}

}  // namespace leap::sandbox::detail

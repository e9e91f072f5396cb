// SPDX-License-Identifier: Apache-2.0
// The seccomp-bpf filters. A deny-list, not an allow-list: NVRTC and the CUDA driver are closed
// binaries whose system calls change between releases, and an allow-list that misses one turns every
// compile into a crash; the calls that matter for escaping (exec, sockets, ptrace, other processes'
// memory, mounts, namespaces, bpf, perf, userfaultfd, keyrings, modules, io_uring, handles) are few
// and stable. System calls newer than this build's headers know answer ENOSYS, so a future kernel's
// additions are not silently allowed.
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <initializer_list>

#include "confinement/confinement.hpp"

namespace leap::sandbox::detail {
namespace {

#if defined(__x86_64__)
constexpr std::uint32_t k_arch = AUDIT_ARCH_X86_64;
constexpr bool k_arch_known = true;
#elif defined(__aarch64__)
constexpr std::uint32_t k_arch = AUDIT_ARCH_AARCH64;
constexpr bool k_arch_known = true;
#else
constexpr std::uint32_t k_arch = 0;
constexpr bool k_arch_known = false;
#endif

// The last system call number Linux 6.1 (Debian 12's headers) defines on both architectures.
constexpr std::uint32_t k_last_known_syscall = 450;

sock_filter stmt(std::uint16_t code, std::uint32_t k) { return sock_filter{code, 0, 0, k}; }
sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
  return sock_filter{code, jt, jf, k};
}

// Calls that no compile and no evaluation needs and that an escape would: each kills the process.
constexpr int k_denied_everywhere[] = {
    __NR_execve,
    __NR_execveat,
    __NR_ptrace,
    __NR_process_vm_readv,
    __NR_process_vm_writev,
    __NR_mount,
    __NR_umount2,
    __NR_pivot_root,
    __NR_chroot,
    __NR_unshare,
    __NR_setns,
    __NR_bpf,
    __NR_userfaultfd,
    __NR_keyctl,
    __NR_add_key,
    __NR_request_key,
    __NR_kexec_load,
    __NR_kexec_file_load,
    __NR_init_module,
    __NR_finit_module,
    __NR_delete_module,
    __NR_open_by_handle_at,
    __NR_name_to_handle_at,
    __NR_io_uring_setup,
    __NR_io_uring_enter,
    __NR_io_uring_register,
    __NR_fanotify_init,
    __NR_fsopen,
    __NR_fsmount,
    __NR_fsconfig,
    __NR_fspick,
    __NR_open_tree,
    __NR_move_mount,
    __NR_mount_setattr,
    __NR_kcmp,
    __NR_pidfd_getfd,
    __NR_process_madvise,
    __NR_swapon,
    __NR_swapoff,
    __NR_reboot,
    __NR_syslog,
    __NR_acct,
    __NR_settimeofday,
    __NR_clock_settime,
    __NR_adjtimex,
    __NR_clock_adjtime,
    __NR_quotactl,
    __NR_personality,
    __NR_lookup_dcookie,
    __NR_vhangup,
    __NR_sethostname,
    __NR_setdomainname,
#if defined(__x86_64__)
    __NR_iopl,
    __NR_ioperm,
    __NR_uselib,
    __NR_create_module,
    __NR_get_kernel_syms,
    __NR_query_module,
    __NR_nfsservctl,
    __NR_sysfs,
    __NR__sysctl,
#endif
};
// A compile child also needs no network, no new processes and no signals to anything but itself.
constexpr int k_denied_in_compile[] = {
    __NR_socket,
    __NR_socketpair,
    __NR_connect,
    __NR_bind,
    __NR_listen,
    __NR_accept,
    __NR_accept4,
    __NR_perf_event_open,
    __NR_kill,
    __NR_tkill,
    __NR_rt_sigqueueinfo,
    __NR_rt_tgsigqueueinfo,
    __NR_pidfd_send_signal,
    __NR_pidfd_open,
#if defined(__x86_64__)
    __NR_fork,
    __NR_vfork,
#endif
};

SeccompFilter build(bool compile_child) {
  SeccompFilter f;
  auto& c = f.code;
  c.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  c.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, k_arch, 1, 0));
  c.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  c.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
#if defined(__x86_64__)
  c.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));  // the x32 ABI's numbers
  c.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
  c.push_back(jump(BPF_JMP | BPF_JGT | BPF_K, k_last_known_syscall, 0, 1));
  c.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
  auto deny = [&](int nr) {
    c.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1));
    c.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  };
  for (int nr : k_denied_everywhere) deny(nr);
  if (compile_child) {
    for (int nr : k_denied_in_compile) deny(nr);
    // clone3 passes its flags in memory the filter cannot read: ENOSYS makes glibc fall back to clone.
    c.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1));
    c.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
    // clone: threads only (flags are the first argument on both architectures; low word little-endian).
    c.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 3));
    c.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])));
    c.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0));
    c.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  }
  c.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  return f;
}

}  // namespace

SeccompFilter compile_child_filter() { return build(true); }
SeccompFilter gpu_runner_filter() { return build(false); }

int apply_seccomp(const SeccompFilter& filter) noexcept {
  if (!k_arch_known) return ENOSYS;
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  sock_fprog prog{static_cast<unsigned short>(filter.code.size()), const_cast<sock_filter*>(filter.code.data())};
  if (::syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) return errno;
  return 0;
}

bool seccomp_available(std::string& reason) {
  if (!k_arch_known) {
    reason = "no system-call table for this architecture in leap (x86_64 and aarch64 are known)";
    return false;
  }
  // SECCOMP_GET_ACTION_AVAIL answers without installing anything.
  std::uint32_t action = SECCOMP_RET_KILL_PROCESS;
  if (::syscall(__NR_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0) {
    reason = errno == ENOSYS || errno == EINVAL ? "the kernel has no seccomp filter support (CONFIG_SECCOMP_FILTER)"
                                                : std::string("seccomp refused: errno ") + std::to_string(errno);
    return false;
  }
  return true;
}

}  // namespace leap::sandbox::detail

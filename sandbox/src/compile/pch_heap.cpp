// SPDX-License-Identifier: Apache-2.0
#include "compile/pch_heap.hpp"

#include <elf.h>
#include <link.h>
#include <nvrtc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string_view>

#include "common/sanitizer_build.hpp"
#include "common/sha256.hpp"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

namespace leap::sandbox::detail {
namespace {

std::atomic<std::uintptr_t> g_address{0};
std::atomic<std::size_t> g_heap_bytes{0};
std::atomic<bool> g_populate{false};

// Stands in for mmap in libnvrtc only (its GOT slot points here). Async-signal-safe and allocation-free:
// it runs inside NVRTC in a confined child.
void* nvrtc_mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  const std::uintptr_t pinned = g_address.load(std::memory_order_relaxed);
  if (pinned != 0 && addr == nullptr && fd == -1 && (flags & MAP_ANONYMOUS) != 0 && (flags & MAP_FIXED) == 0 &&
      length == g_heap_bytes.load(std::memory_order_relaxed)) {
    void* want = reinterpret_cast<void*>(pinned);
    void* p = ::mmap(want, length, prot, flags | MAP_FIXED_NOREPLACE, fd, offset);
    if (p == want) return p;
    // Taken (EEXIST), or a kernel older than 4.17 that read the flag as a hint and chose elsewhere.
    if (p != MAP_FAILED) ::munmap(p, length);
  }
  if (fd != -1 && (flags & MAP_PRIVATE) != 0 && g_populate.load(std::memory_order_relaxed)) flags |= MAP_POPULATE;
  return ::mmap(addr, length, prot, flags, fd, offset);
}

struct Search {
  void* replacement;
  int patched = 0;
  int error = 0;
};

ElfW(Addr) absolute(ElfW(Addr) base, ElfW(Addr) value) {
  // glibc relocates most d_ptr entries of a loaded object in place; some ports leave them relative.
  return value < base ? base + value : value;
}

int patch_object(dl_phdr_info* info, std::size_t, void* data) {
  auto* s = static_cast<Search*>(data);
  const std::string_view name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  const std::size_t slash = name.rfind('/');
  const std::string_view file = slash == std::string_view::npos ? name : name.substr(slash + 1);
  if (!file.starts_with("libnvrtc.") && !file.starts_with("libnvrtc-")) return 0;
  if (file.starts_with("libnvrtc-builtins")) return 0;
  const ElfW(Addr) base = info->dlpi_addr;
  const ElfW(Dyn)* dyn = nullptr;
  ElfW(Addr) relro_start = 0, relro_end = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_DYNAMIC) dyn = reinterpret_cast<const ElfW(Dyn)*>(base + ph.p_vaddr);
    if (ph.p_type == PT_GNU_RELRO) {
      relro_start = base + ph.p_vaddr;
      relro_end = relro_start + ph.p_memsz;
    }
  }
  if (dyn == nullptr) return 0;
  ElfW(Addr) symtab = 0, strtab = 0, jmprel = 0, rela = 0;
  std::size_t pltrelsz = 0, relasz = 0;
  for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: symtab = absolute(base, d->d_un.d_ptr); break;
      case DT_STRTAB: strtab = absolute(base, d->d_un.d_ptr); break;
      case DT_JMPREL: jmprel = absolute(base, d->d_un.d_ptr); break;
      case DT_PLTRELSZ: pltrelsz = d->d_un.d_val; break;
      case DT_RELA: rela = absolute(base, d->d_un.d_ptr); break;
      case DT_RELASZ: relasz = d->d_un.d_val; break;
      default: break;
    }
  }
  if (symtab == 0 || strtab == 0) return 0;
  const auto* syms = reinterpret_cast<const ElfW(Sym)*>(symtab);
  const auto* strings = reinterpret_cast<const char*>(strtab);
  const long page = ::sysconf(_SC_PAGESIZE);
  auto scan = [&](ElfW(Addr) table, std::size_t bytes) {
    if (table == 0) return;
    const auto* r = reinterpret_cast<const ElfW(Rela)*>(table);
    for (std::size_t i = 0; i < bytes / sizeof(ElfW(Rela)); ++i) {
      const auto type = ELF64_R_TYPE(r[i].r_info);
#if defined(__x86_64__)
      if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
#elif defined(__aarch64__)
      if (type != R_AARCH64_JUMP_SLOT && type != R_AARCH64_GLOB_DAT) continue;
#else
      (void)type;
      continue;
#endif
      const ElfW(Sym)& sym = syms[ELF64_R_SYM(r[i].r_info)];
      if (std::strcmp(strings + sym.st_name, "mmap") != 0 && std::strcmp(strings + sym.st_name, "mmap64") != 0)
        continue;
      auto* slot = reinterpret_cast<void**>(base + r[i].r_offset);
      const auto at = reinterpret_cast<ElfW(Addr)>(slot);
      const bool read_only = at >= relro_start && at < relro_end;  // bound at load time (-z now) and sealed
      void* first = reinterpret_cast<void*>(at & ~static_cast<ElfW(Addr)>(page - 1));
      if (read_only && ::mprotect(first, static_cast<std::size_t>(page), PROT_READ | PROT_WRITE) != 0) {
        s->error = errno;
        continue;
      }
      __atomic_store_n(slot, s->replacement, __ATOMIC_RELEASE);
      if (read_only) ::mprotect(first, static_cast<std::size_t>(page), PROT_READ);
      ++s->patched;
    }
  };
  scan(jmprel, pltrelsz);
  scan(rela, relasz);
  return 0;
}

}  // namespace

std::uintptr_t pin_nvrtc_pch_heap(std::uintptr_t address, std::string& why) {
  static std::mutex mutex;
  static std::string failure;
  std::lock_guard lock(mutex);
  if (const std::uintptr_t a = g_address.load(); a != 0) return a;
  if (!failure.empty()) {
    why = failure;
    return 0;
  }
  std::size_t heap = 0;
  if (nvrtcGetPCHHeapSize(&heap) != NVRTC_SUCCESS || heap == 0) {
    why = failure = "NVRTC reports no PCH heap";
    return 0;
  }
  g_heap_bytes = heap;
  g_address = address;  // before the slot points at nvrtc_mmap, which reads it
  Search s{reinterpret_cast<void*>(&nvrtc_mmap)};
  ::dl_iterate_phdr(&patch_object, &s);
  if (s.patched == 0) {
    g_address = 0;
    why = failure = s.error != 0 ? std::string("cannot patch libnvrtc's mmap slot: ") + std::strerror(s.error)
                                 : "libnvrtc's calls to mmap were not found (an NVRTC this sandbox does not know)";
    return 0;
  }
  return address;
}

std::uintptr_t pinned_nvrtc_pch_heap() noexcept { return g_address.load(); }

PchHeapRange pch_heap_range() noexcept {
  constexpr std::uint64_t gib = 1ull << 30;
  constexpr std::uint64_t tib = 1ull << 40;
  if constexpr (k_built_with_thread_sanitizer) {
    // ThreadSanitizer lets a process map only where its fixed layout keeps application memory: above
    // 512 GiB (2 TiB in newer runtimes) come its shadow and ranges it forbids, up to where PIE programs
    // load. The lowest range, where a non-PIE program and MAP_32BIT mappings live, is application
    // memory in every version of it; measured with GCC 12: [0, 512 GiB) maps, [512 GiB, 85 TiB) not.
    return {256 * gib, 255};  // [256 GiB, 511 GiB)
  }
  // AddressSanitizer's shadow on x86-64 ends 2 GiB above 16 TiB: start well past it.
  return {16 * tib + 8 * gib, 8184};  // [16 TiB + 8 GiB, 24 TiB)
}

void populate_nvrtc_file_mappings(bool on) noexcept { g_populate.store(on, std::memory_order_relaxed); }

std::uintptr_t pch_heap_address_for(const std::string& secret) {
  const Digest d = hmac_sha256(secret, "leap-sandbox/pch-heap-address/v1");
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | d[static_cast<std::size_t>(i)];
  constexpr std::uint64_t gib = 1ull << 30;
  const PchHeapRange r = pch_heap_range();
  return static_cast<std::uintptr_t>(r.first + (v % r.slots) * gib);
}

}  // namespace leap::sandbox::detail

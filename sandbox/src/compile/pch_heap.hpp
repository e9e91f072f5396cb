// SPDX-License-Identifier: Apache-2.0
// NVRTC's precompiled-header heap at one address per machine, so a PCH file made by one process is
// usable by the next.
//
// Why: NVRTC 13.0 stores pointers into its PCH heap inside the PCH file and refuses the file in any
// process whose heap lies elsewhere ("incompatible precompiled header (PCH) heap allocation
// address"). With address-space randomisation the heap, an anonymous mmap of nvrtcGetPCHHeapSize()
// bytes, lands at a new address in every process. Turning randomisation off for the whole compile
// process (personality(ADDR_NO_RANDOMIZE), as `setarch -R` does) would fix every library, stack and
// heap of a process that parses hostile source at a guessable place; here only the PCH heap moves.
//
// How: the `mmap` slot of libnvrtc's own global offset table is pointed at a function that places an
// anonymous mapping of exactly the heap's size, asked for without an address, at the pinned address
// (MAP_FIXED_NOREPLACE: never over anything already mapped) and passes every other call through.
// Only libnvrtc's calls are affected; the rest of the process, and libnvrtc's code, data and other
// mappings, stay randomised. If the pinned place is taken the kernel's choice stands, and NVRTC then
// simply does not use the PCH (the compile is repeated without it, see nvrtc_compile.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace leap::sandbox::detail {

// Installs the redirection (once per process; later calls keep the first address) for heaps allocated
// after the call: in this process and in the children it forks. Returns the address in force, or 0 when
// libnvrtc's table could not be patched (then no PCH may be kept on disk). `why` says why not.
std::uintptr_t pin_nvrtc_pch_heap(std::uintptr_t address, std::string& why);

// While on, libnvrtc's private file mappings (a stored PCH, mapped in 64 KiB pieces) are populated
// when made (MAP_POPULATE) instead of page by page on first touch. Measured on the shared 2-core
// machine, a fresh process compiling a cooperative-groups kernel with a stored 140 MB PCH: 0.85 s of
// system time in 26,000 page faults without, 0.18 s with; the compile 1.3 s against 0.63 s. Turned on
// only around a compile given a stored PCH (nvrtc_compile.cpp): a pooled compiler's own automatic PCH
// was measured slower with it (see docs/sandbox.md, "Precompiled headers on disk"). Effective only once
// pin_nvrtc_pch_heap succeeded.
void populate_nvrtc_file_mappings(bool on) noexcept;

// The address in force, 0 when none.
std::uintptr_t pinned_nvrtc_pch_heap() noexcept;

// Where a pinned heap may go: `slots` 1 GiB-aligned places from `first`. Normally [16 TiB + 8 GiB,
// 24 TiB): far from where Linux puts programs, their heaps, libraries and stacks on x86-64 and arm64
// with 48-bit addresses, and past AddressSanitizer's shadow. A ThreadSanitizer build maps nothing
// there (its shadow), so it uses [256 GiB, 511 GiB), which that sanitizer leaves to the program.
struct PchHeapRange {
  std::uint64_t first;
  std::uint64_t slots;
};
PchHeapRange pch_heap_range() noexcept;

// A per-machine address in pch_heap_range(), derived from a secret (the PCH store's MAC key): not
// guessable from outside the machine, the same for every process here built the same way.
std::uintptr_t pch_heap_address_for(const std::string& secret);

}  // namespace leap::sandbox::detail

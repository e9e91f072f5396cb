// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the ELF64 reader that lists a CUBIN's kernels and reads each kernel's
// parameters from its .nv.info section. Any bytes must give a result or nullopt, never a read out
// of bounds; every parameter it reports is non-empty and inside a 64 KiB block.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "compile/elf_kernels.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)leap::sandbox::detail::cubin_kernels(bytes);
  if (const auto params = leap::sandbox::detail::cubin_kernel_params(bytes)) {
    for (const auto& [kernel, layout] : *params) {
      std::uint64_t end = 0;
      for (const leap::sandbox::KernelParam& p : layout) {
        if (p.size == 0 || p.offset < end || std::uint64_t{p.offset} + p.size > 0x10000) std::abort();
        end = std::uint64_t{p.offset} + p.size;
      }
    }
  }
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the ELF64 symbol-table reader that lists a CUBIN's kernels. Any bytes must give
// a list or nullopt, never a read out of bounds.
#include <cstdint>
#include <string_view>

#include "elf_kernels.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)leap::sandbox::detail::cubin_kernels(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}

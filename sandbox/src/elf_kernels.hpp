// SPDX-License-Identifier: Apache-2.0
// The kernels a CUBIN defines, read from its ELF symbol table. Internal.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace leap::sandbox::detail {

// Every kernel entry in a little-endian ELF64 CUBIN, sorted: a FUNC symbol with global or weak
// binding, marked as a CUDA entry in st_other (STO_CUDA_ENTRY, 0x10), whose code lies in the section
// ".text.<symbol name>". Device functions (local, unmarked) are not kernels. Every offset, size and
// string is checked against the buffer; nullopt when the bytes are not such an ELF file.
std::optional<std::vector<std::string>> cubin_kernels(std::string_view elf);

}  // namespace leap::sandbox::detail

// SPDX-License-Identifier: Apache-2.0
// A CompileResult as bytes, the form the compile child, the pooled compilers and the disk cache pass
// and keep it in.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "leap/sandbox/compile_result.hpp"

namespace leap::sandbox::detail {

// A self-delimiting binary form of a result (status, limit, log, ptx, cubin, lowered names, seconds).
std::string encode_result(const CompileResult& result);
// The result `bytes` encode; nullopt for anything encode_result did not write, trailing bytes included.
std::optional<CompileResult> decode_result(std::string_view bytes);

}  // namespace leap::sandbox::detail

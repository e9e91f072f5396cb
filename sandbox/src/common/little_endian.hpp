// SPDX-License-Identifier: Apache-2.0
// Little-endian fixed-width fields and length-prefixed byte strings: the self-delimiting binary forms
// of compile jobs, results, worker frames and stored PCH records are built from these. A get_ function
// consumes what it read from `in` and returns false, reading nothing more, when `in` is too short.
#pragma once

#include <string>
#include <string_view>

namespace leap::sandbox::detail {

void put_u64(std::string& out, unsigned long long v);
bool get_u64(std::string_view& in, unsigned long long& v);
void put_bytes(std::string& out, std::string_view bytes);  // length-prefixed
bool get_bytes(std::string_view& in, std::string& bytes);

}  // namespace leap::sandbox::detail

// SPDX-License-Identifier: Apache-2.0
#include "common/little_endian.hpp"

#include <cstddef>

namespace leap::sandbox::detail {

void put_u64(std::string& out, unsigned long long v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFu));
}

bool get_u64(std::string_view& in, unsigned long long& v) {
  if (in.size() < 8) return false;
  v = 0;
  for (std::size_t i = 0; i < 8; ++i)
    v |= static_cast<unsigned long long>(static_cast<unsigned char>(in[i])) << (8 * i);
  in.remove_prefix(8);
  return true;
}

void put_bytes(std::string& out, std::string_view bytes) {
  put_u64(out, bytes.size());
  out.append(bytes);
}

bool get_bytes(std::string_view& in, std::string& bytes) {
  unsigned long long n = 0;
  if (!get_u64(in, n) || n > in.size()) return false;
  bytes.assign(in.substr(0, static_cast<std::size_t>(n)));
  in.remove_prefix(static_cast<std::size_t>(n));
  return true;
}

}  // namespace leap::sandbox::detail

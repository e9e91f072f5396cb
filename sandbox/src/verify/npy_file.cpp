// SPDX-License-Identifier: Apache-2.0
#include "verify/npy_file.hpp"

#include <fstream>
#include <stdexcept>
#include <string>

namespace leap::sandbox::verify {

namespace {

// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } padded with spaces to a 64-byte
// boundary (counting the 10 bytes before it) and ended by a newline.
std::string npy_header(std::string_view descr, const std::vector<std::int64_t>& shape) {
  std::string dims;  // Python's tuple: (), (3,), (3, 4)
  for (std::size_t i = 0; i < shape.size(); ++i) dims += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";
  std::string h = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
  constexpr std::size_t preamble = 10;  // magic (6), version (2), header length (2)
  const std::size_t total = (preamble + h.size() + 1 + 63) / 64 * 64;
  h.append(total - preamble - h.size() - 1, ' ');
  h.push_back('\n');
  return h;
}

}  // namespace

void write_npy(const std::filesystem::path& path, std::string_view descr, const std::vector<std::int64_t>& shape,
               const void* data, std::size_t bytes) {
  const std::string header = npy_header(descr, shape);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::string preamble("\x93NUMPY\x01\x00", 8);                 // the magic and version 1.0
  preamble.push_back(static_cast<char>(header.size() & 0xff));  // the header's length, little-endian
  preamble.push_back(static_cast<char>(header.size() >> 8));
  out.write(preamble.data(), static_cast<std::streamsize>(preamble.size()));
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace leap::sandbox::verify

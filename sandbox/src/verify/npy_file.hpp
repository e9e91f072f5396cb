// SPDX-License-Identifier: Apache-2.0
// NumPy's .npy format, version 1.0, written: a magic string, a Python-literal header naming the
// element type, the order and the shape, padded so the data starts at a multiple of 64 bytes, then
// the elements, little-endian and row-major. numpy.load reads it with no other file. Internal.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

namespace leap::sandbox::verify {

// `descr` is NumPy's type string ("<f4", "<f2", "<i4"); `data` holds the product of `shape`
// elements of it. Throws std::runtime_error naming the file when it cannot be written.
void write_npy(const std::filesystem::path& path, std::string_view descr, const std::vector<std::int64_t>& shape,
               const void* data, std::size_t bytes);

}  // namespace leap::sandbox::verify

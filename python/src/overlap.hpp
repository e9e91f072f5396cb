// SPDX-License-Identifier: Apache-2.0
// An out that shares memory with an input is refused before anything is written. The core reads
// inputs while it writes results, so a shifted view of one buffer (out=buf[1:], rewards=buf[:-1])
// would give wrong numbers without an error. The one sharing allowed is out as the very rewards or
// scores array (same address, same length): the core computes that in place exactly as into a fresh
// array. The bindings take one-dimensional contiguous arrays only (require_vector), so comparing
// the byte ranges the elements occupy is exact: two such arrays overlap exactly when they share a
// byte (numpy's shares_memory). The same memory mapped at two addresses is not seen.
#pragma once

#include <pybind11/numpy.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "array_views.hpp"

namespace leap::python {

struct ByteRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;  // one past the last byte; begin == end for an empty array

  bool operator==(const ByteRange&) const = default;

  bool shares_a_byte_with(const ByteRange& other) const noexcept {
    return begin < end && other.begin < other.end && begin < other.end && other.begin < end;
  }
};

// The array must have passed require_vector (one-dimensional, contiguous).
inline ByteRange byte_range(const py::array& array) {
  const auto begin = reinterpret_cast<std::uintptr_t>(array.data());
  return {begin, begin + static_cast<std::uintptr_t>(array.nbytes())};
}

inline ByteRange byte_range(const IntegerVector& vector) {
  const auto begin = reinterpret_cast<std::uintptr_t>(vector.data);
  return {begin, begin + static_cast<std::uintptr_t>(vector.size) * static_cast<std::uintptr_t>(vector.itemsize)};
}

// ValueError "out overlaps rewards; ..." when the two share memory.
inline void refuse_overlap(const char* out_name, const ByteRange& out, const char* input_name, const ByteRange& input) {
  if (out.shares_a_byte_with(input)) {
    value_error(out_name, " overlaps ", input_name, "; pass a separate array (", out_name,
                " may share no memory with an input, not even as the same array)");
  }
}

// The same, but out may be the input itself (computed in place, as if out were fresh).
inline void refuse_overlap_unless_same(const char* out_name, const ByteRange& out, const char* input_name,
                                       const ByteRange& input) {
  if (out == input) return;
  if (out.shares_a_byte_with(input)) {
    value_error(out_name, " overlaps ", input_name, "; pass a separate array, or ", input_name,
                " itself to compute in place (a shifted or partial view of it would be read after being written)");
  }
}

template <class Input>
void refuse_overlap(const char* out_name, const ByteRange& out, const char* input_name,
                    const std::optional<Input>& input) {
  if (input) refuse_overlap(out_name, out, input_name, byte_range(*input));
}

}  // namespace leap::python

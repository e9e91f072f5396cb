// SPDX-License-Identifier: Apache-2.0
// Group ids as the core takes them (uint32), from whatever integers a trainer holds. A contiguous
// uint32 array is used in place; other integer dtypes are narrowed in one pass when every id fits in
// [0, 2^32), else renumbered densely by value (negative ids, 64-bit hashes). Hashable ids (uid
// strings in an object array) are numbered by the Python layer (leap.dense_group_ids) first.
// Runs without the GIL: the caller has validated the array and holds a reference to it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "array_views.hpp"

namespace leap::python {

class GroupIds {
 public:
  explicit GroupIds(const IntegerVector& ids) {
    if (!ids.is_signed && ids.itemsize == 4) {
      view_ = {static_cast<const std::uint32_t*>(ids.data), ids.size};
      return;
    }
    ids.visit([&](const auto* values) { narrow(values, ids.size); });
    view_ = storage_;
  }

  std::span<const std::uint32_t> view() const noexcept { return view_; }
  bool copied() const noexcept { return view_.data() == storage_.data() && !storage_.empty(); }

 private:
  template <class T>
  void narrow(const T* values, std::size_t size) {
    storage_.resize(size);
    bool fits = true;
    for (std::size_t i = 0; i < size; ++i) {
      const T value = values[i];
      if constexpr (std::is_signed_v<T>) fits &= value >= 0;
      if constexpr (sizeof(T) > 4) {
        fits &= static_cast<std::uint64_t>(value) <= std::numeric_limits<std::uint32_t>::max();
      }
      storage_[i] = static_cast<std::uint32_t>(value);
    }
    if (fits) return;
    // Equal ids must stay equal and different ids different: number the distinct values.
    std::vector<T> distinct(values, values + size);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    for (std::size_t i = 0; i < size; ++i) {
      storage_[i] =
          static_cast<std::uint32_t>(std::lower_bound(distinct.begin(), distinct.end(), values[i]) - distinct.begin());
    }
  }

  std::vector<std::uint32_t> storage_;
  std::span<const std::uint32_t> view_;
};

}  // namespace leap::python

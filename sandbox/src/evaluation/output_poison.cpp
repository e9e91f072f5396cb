// SPDX-License-Identifier: Apache-2.0
#include "evaluation/output_poison.hpp"

#include "evaluation/seed_streams.hpp"

namespace leap::sandbox {

std::uint32_t poison_pattern(DType dtype, std::uint64_t seed) noexcept {
  switch (dtype) {
    case DType::float32: return 0x7FC0DEADu;  // quiet NaN with a payload
    case DType::float16: return 0x7E5Au;      // quiet NaN
    case DType::bfloat16: return 0x7FDAu;     // quiet NaN
    case DType::int32: {
      std::uint64_t s = seed ^ detail::k_int_poison_stream;
      return static_cast<std::uint32_t>(detail::splitmix(s));
    }
    case DType::int8: {  // one byte: an unwritten element passes one trial in 256, three in 2^24
      std::uint64_t s = seed ^ detail::k_int_poison_stream;
      return static_cast<std::uint32_t>(detail::splitmix(s) & 0xFFu);
    }
  }
  return 0;
}

}  // namespace leap::sandbox

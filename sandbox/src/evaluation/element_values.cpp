// SPDX-License-Identifier: Apache-2.0
#include "evaluation/element_values.hpp"

#include <bit>
#include <cmath>
#include <cstring>

namespace leap::sandbox {

std::uint16_t float_to_half(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
  if (abs >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);  // rounds to infinity
  if (abs < 0x38800000u) {                                                    // subnormal half (or zero)
    if (abs < 0x33000000u) return static_cast<std::uint16_t>(sign);
    const std::uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
    const int shift = 126 - static_cast<int>(abs >> 23);  // 14..24
    std::uint32_t h = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u) != 0)) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = ((abs - 0x38000000u) >> 13);
  const std::uint32_t rem = abs & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0)) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

float half_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
  if (exp == 0x1Fu) return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13));
  if (exp == 0) {
    const float v = static_cast<float>(mant) * 0x1.0p-24f;
    return sign != 0 ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

std::uint16_t float_to_bfloat16(float f) noexcept {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);  // keep NaN quiet
  const std::uint32_t rounded = x + 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<std::uint16_t>(rounded >> 16);
}

float bfloat16_to_float(std::uint16_t b) noexcept { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

double element_value(DType dtype, const void* data, std::size_t i) noexcept {
  switch (dtype) {
    case DType::float32: return static_cast<const float*>(data)[i];
    case DType::float16: return half_to_float(static_cast<const std::uint16_t*>(data)[i]);
    case DType::bfloat16: return bfloat16_to_float(static_cast<const std::uint16_t*>(data)[i]);
    case DType::int32: return static_cast<const std::int32_t*>(data)[i];
    case DType::int8: return static_cast<const std::int8_t*>(data)[i];
  }
  return 0.0;
}

void store_element(DType dtype, void* out, std::size_t i, double v) noexcept {
  switch (dtype) {
    case DType::float32: static_cast<float*>(out)[i] = static_cast<float>(v); break;
    case DType::float16: static_cast<std::uint16_t*>(out)[i] = float_to_half(static_cast<float>(v)); break;
    case DType::bfloat16: static_cast<std::uint16_t*>(out)[i] = float_to_bfloat16(static_cast<float>(v)); break;
    case DType::int32: static_cast<std::int32_t*>(out)[i] = static_cast<std::int32_t>(v); break;
    case DType::int8:  // saturating, as a quantizer clamps: out-of-range values are the range's ends
      static_cast<std::int8_t*>(out)[i] = static_cast<std::int8_t>(v != v       ? 0.0
                                                                   : v < -128.0 ? -128.0
                                                                   : v > 127.0  ? 127.0
                                                                                : std::trunc(v));
      break;
  }
}

}  // namespace leap::sandbox

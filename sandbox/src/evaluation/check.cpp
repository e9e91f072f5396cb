// SPDX-License-Identifier: Apache-2.0
#include "evaluation/check.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace leap::sandbox {
namespace {

// Salts that give a use of a seed its own random stream: without them, where special values land
// and the int32 poison pattern would be the very numbers the same seed draws for the input's
// values (generate). Their values matter only in differing from each other and from 0.
constexpr std::uint64_t k_special_places_stream = 0x5BEC1A1F00D5EEDULL;
constexpr std::uint64_t k_int_poison_stream = 0xD1B54A32D192ED03ULL;

std::uint64_t splitmix(std::uint64_t& s) noexcept {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// xoshiro256+: fast enough to fill hundreds of MB per evaluation.
struct Rng {
  std::uint64_t s[4];
  explicit Rng(std::uint64_t seed) noexcept {
    for (auto& w : s) w = splitmix(seed);
  }
  std::uint64_t next() noexcept {
    const std::uint64_t result = s[0] + s[3];
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
  }
  double unit() noexcept { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

void store(DType dtype, void* out, std::size_t i, double v) noexcept {
  switch (dtype) {
    case DType::float32: static_cast<float*>(out)[i] = static_cast<float>(v); break;
    case DType::float16: static_cast<std::uint16_t*>(out)[i] = float_to_half(static_cast<float>(v)); break;
    case DType::bfloat16: static_cast<std::uint16_t*>(out)[i] = float_to_bfloat16(static_cast<float>(v)); break;
    case DType::int32: static_cast<std::int32_t*>(out)[i] = static_cast<std::int32_t>(v); break;
  }
}

std::string num(double v) {
  std::ostringstream os;
  os.precision(7);
  os << v;
  return os.str();
}

}  // namespace

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
  }
  return 0.0;
}

void generate(DType dtype, const Generator& g, std::uint64_t seed, void* out, std::size_t n) {
  Rng rng(seed);
  if (g.kind == GeneratorKind::zeros || g.kind == GeneratorKind::constant) {
    const double v = g.kind == GeneratorKind::zeros ? 0.0 : g.a;
    for (std::size_t i = 0; i < n; ++i) store(dtype, out, i, v);
  } else if (g.kind == GeneratorKind::arange) {
    for (std::size_t i = 0; i < n; ++i) store(dtype, out, i, static_cast<double>(i));
  } else if (g.kind == GeneratorKind::randint) {
    const auto lo = static_cast<std::int64_t>(std::ceil(g.a)), hi = static_cast<std::int64_t>(std::floor(g.b));
    const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    for (std::size_t i = 0; i < n; ++i)
      store(dtype, out, i, static_cast<double>(lo + static_cast<std::int64_t>(rng.next() % span)));
  } else if (g.kind == GeneratorKind::normal) {
    for (std::size_t i = 0; i < n; i += 2) {  // Box-Muller, two at a time
      const double u1 = 1.0 - rng.unit(), u2 = rng.unit();
      const double r = std::sqrt(-2.0 * std::log(u1)), t = 2.0 * 3.14159265358979323846 * u2;
      store(dtype, out, i, g.a + g.b * r * std::cos(t));
      if (i + 1 < n) store(dtype, out, i + 1, g.a + g.b * r * std::sin(t));
    }
  } else {  // uniform
    for (std::size_t i = 0; i < n; ++i) store(dtype, out, i, g.a + (g.b - g.a) * rng.unit());
  }
}

void sprinkle_special_values(DType dtype, std::uint64_t seed, void* out, std::size_t n) {
  if (dtype == DType::int32 || n == 0) return;
  // The subnormals of each float type, as float32 values that convert to them exactly.
  const float smallest_subnormal = dtype == DType::float32 ? 0x1p-149f : dtype == DType::float16 ? 0x1p-24f : 0x1p-133f;
  const float largest_subnormal = dtype == DType::float32   ? 0x1.fffffcp-127f
                                  : dtype == DType::float16 ? 0x1.ff8p-15f
                                                            : 0x1.fcp-127f;
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             -0.0,
                             smallest_subnormal,
                             largest_subnormal};
  constexpr std::size_t k_kinds = sizeof specials / sizeof specials[0];
  // One element in 64 on average, and each kind at least once while there is room.
  const std::size_t count = std::min(n, std::max(k_kinds, n / 64));
  Rng rng(seed ^ k_special_places_stream);
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t at = static_cast<std::size_t>(rng.next() % n);
    const double v = specials[k % k_kinds];
    if (dtype == DType::float32) static_cast<float*>(out)[at] = static_cast<float>(v);
    else store(dtype, out, at, v);
  }
}

std::uint32_t poison_pattern(DType dtype, std::uint64_t seed) noexcept {
  switch (dtype) {
    case DType::float32: return 0x7FC0DEADu;  // quiet NaN with a payload
    case DType::float16: return 0x7E5Au;      // quiet NaN
    case DType::bfloat16: return 0x7FDAu;     // quiet NaN
    case DType::int32: {
      std::uint64_t s = seed ^ k_int_poison_stream;
      return static_cast<std::uint32_t>(splitmix(s));
    }
  }
  return 0;
}

std::uint64_t trial_seed(std::uint64_t base, std::uint64_t trial) noexcept {
  std::uint64_t s = base + 0x632BE59BD9B4E019ULL * (trial + 1);
  return splitmix(s);
}

Comparison compare(DType dtype, const void* actual, const void* expected, std::size_t n, Tolerance tol) noexcept {
  Comparison c;
  for (std::size_t i = 0; i < n; ++i) {
    const double a = element_value(dtype, actual, i), e = element_value(dtype, expected, i);
    bool bad = false;
    if (std::isnan(e) || std::isnan(a)) {
      bad = std::isnan(e) != std::isnan(a);
      if (std::isnan(a) && !std::isnan(e)) ++c.nan_count;
    } else if (std::isinf(e) || std::isinf(a)) {
      bad = a != e;
    } else {
      const double err = std::fabs(a - e);
      const double rel = err / std::max(std::fabs(e), std::numeric_limits<double>::min());
      c.max_abs_error = std::max(c.max_abs_error, err);
      c.max_rel_error = std::max(c.max_rel_error, rel);
      bad = err > tol.atol + tol.rtol * std::fabs(e);
    }
    if (bad) {
      if (c.ok) {
        c.first_index = i;
        c.first_expected = e;
        c.first_actual = a;
      }
      c.ok = false;
      ++c.mismatches;
    }
  }
  return c;
}

std::string describe(const Comparison& c, const std::string& buffer, std::size_t n) {
  if (c.ok) return buffer + ": all " + std::to_string(n) + " elements match (max abs err " + num(c.max_abs_error) + ")";
  std::string s = buffer + ": " + std::to_string(c.mismatches) + " of " + std::to_string(n) +
                  " elements differ (max abs err " + num(c.max_abs_error) + ", max rel err " + num(c.max_rel_error) +
                  ")";
  if (c.nan_count > 0) s += ", " + std::to_string(c.nan_count) + " NaN (never written?)";
  s += "; first at [" + std::to_string(c.first_index) + "]: expected " + num(c.first_expected) + ", got " +
       num(c.first_actual);
  return s;
}

}  // namespace leap::sandbox

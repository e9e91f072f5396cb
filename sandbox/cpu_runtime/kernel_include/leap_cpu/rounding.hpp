// SPDX-License-Identifier: Apache-2.0
// IEEE rounding in software, for the conversions and arithmetic a GPU rounds in hardware: to half,
// bfloat16 and float, in each of CUDA's four modes (_rn, _rz, _rd, _ru). The host's own float
// arithmetic rounds to nearest only, and its conversions to float only from double.
//
// An operation is computed exactly as a double plus the sign of what that double lost (Exact: the
// TwoSum and FMA error terms), and round_bits rounds that pair once to the target format, so every
// result is correctly rounded: a double rounding (first to double, then to the target) can never
// move a value that lay beside a tie onto it. Half and bfloat16 arithmetic uses this (__hadd,
// __hfma, ...), as the device's correctly rounded add.f16, fma.rn.bf16 and the like do.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace leap_cpu::detail {

enum class Round : int { nearest, zero, down, up };

struct Format {
  int exp_bits;
  int mant_bits;
  std::uint64_t canonical_nan;  // the NaN the device writes (cvt gives 0x7fff for half and bfloat16)
};
inline constexpr Format k_half{5, 10, 0x7FFF};
inline constexpr Format k_bfloat16{8, 7, 0x7FFF};
inline constexpr Format k_float{8, 23, 0x7FFFFFFF};

// A value as a double plus an infinitesimal of sign `residual` (-1, 0, +1): the exact result of an
// operation whose double rounding lost something.
struct Exact {
  double value;
  int residual;
};

constexpr int sign_of(double x) { return (x > 0) - (x < 0); }  // 0 for NaN

// Rounds value + residual to `f` in `mode`; returns the bits (sign | exponent | mantissa).
constexpr std::uint64_t round_bits(double value, int residual, Format f, Round mode) {
  const std::uint64_t b = std::bit_cast<std::uint64_t>(value);
  const bool negative = (b >> 63) != 0;
  const int dexp = static_cast<int>((b >> 52) & 0x7FF);
  std::uint64_t m = b & ((std::uint64_t{1} << 52) - 1);
  const std::uint64_t sign = static_cast<std::uint64_t>(negative) << (f.exp_bits + f.mant_bits);
  const std::uint64_t inf = ((std::uint64_t{1} << f.exp_bits) - 1) << f.mant_bits;
  if (dexp == 0x7FF) return m != 0 ? f.canonical_nan : sign | inf;
  if (dexp == 0 && m == 0) return sign;  // a zero is exact: TwoSum and FMA error terms vanish with it
  // The direction of the mode for this value's magnitude.
  enum Dir { nearest, toward_zero, away };
  const Dir dir = mode == Round::nearest ? nearest
                  : mode == Round::zero  ? toward_zero
                                         : ((mode == Round::up) != negative ? away : toward_zero);
  const int magnitude_residual = negative ? -residual : residual;
  int e = 0;  // |value| = m * 2^(e - 52), m in [2^52, 2^53)
  if (dexp == 0) {
    const int shift = std::countl_zero(m) - 11;
    m <<= shift;
    e = -1022 - shift;
  } else {
    m |= std::uint64_t{1} << 52;
    e = dexp - 1023;
  }
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const int emin = 1 - bias, emax = bias;
  if (e > emax) return sign | (dir == toward_zero ? inf - 1 : inf);
  const int te = e < emin ? emin : e;
  const int drop = 52 - f.mant_bits + (te - e);  // bits of m below the target's last bit, > 0
  std::uint64_t kept = 0, rem = m, half = 0;
  bool below_half = true;  // when every bit is dropped (drop >= 64), m < 2^53 <= half a unit
  if (drop < 64) {
    kept = m >> drop;
    rem = m & ((std::uint64_t{1} << drop) - 1);
    half = std::uint64_t{1} << (drop - 1);
    below_half = rem < half;
  }
  const std::uint64_t hidden = std::uint64_t{1} << f.mant_bits;
  // The truncated magnitude's encoding: encodings of one sign grow with the magnitude, so one step up
  // or down is +1 or -1, across binades and into infinity alike.
  const std::uint64_t truncated =
      kept >= hidden ? (static_cast<std::uint64_t>(te + bias) << f.mant_bits) + (kept - hidden) : kept;
  // What was dropped, against half a unit of the last kept bit.
  enum Cmp { just_below, exact, under_half, at_half, over_half };
  Cmp cmp = over_half;
  if (drop < 64 && rem == 0) {
    cmp = magnitude_residual == 0 ? exact : (magnitude_residual > 0 ? under_half : just_below);
  } else if (below_half) {
    cmp = under_half;
  } else if (rem == half) {
    cmp = magnitude_residual == 0 ? at_half : (magnitude_residual > 0 ? over_half : under_half);
  }
  std::uint64_t r = truncated;
  if (dir == nearest) {
    if (cmp == over_half || (cmp == at_half && (truncated & 1) != 0)) ++r;
  } else if (dir == toward_zero) {
    if (cmp == just_below) --r;
  } else if (cmp != exact && cmp != just_below) {
    ++r;
  }
  return sign | r;
}

constexpr std::uint64_t round_bits(Exact x, Format f, Round mode) { return round_bits(x.value, x.residual, f, mode); }

// The value of `bits` in format `f`, exactly, as a double.
constexpr double value_of(std::uint64_t bits, Format f) {
  const int total = f.exp_bits + f.mant_bits;
  const bool negative = ((bits >> total) & 1) != 0;
  const std::uint64_t ex = (bits >> f.mant_bits) & ((std::uint64_t{1} << f.exp_bits) - 1);
  const std::uint64_t mant = bits & ((std::uint64_t{1} << f.mant_bits) - 1);
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  double v = 0.0;
  if (ex == (std::uint64_t{1} << f.exp_bits) - 1) {
    v = mant != 0 ? std::bit_cast<double>(std::uint64_t{0x7FF8000000000000}) : std::bit_cast<double>(0x7FF0ULL << 48);
  } else if (ex == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - bias - f.mant_bits);
  } else {
    v = std::ldexp(static_cast<double>(mant | (std::uint64_t{1} << f.mant_bits)),
                   static_cast<int>(ex) - bias - f.mant_bits);
  }
  return negative ? -v : v;
}

// Exact results (no overflow assumed, as TwoSum requires).
inline Exact exact_sum(double a, double b) {
  const double s = a + b;
  if (!std::isfinite(s)) return {s, 0};
  const double bb = s - a;
  const double err = (a - (s - bb)) + (b - bb);
  return {s, sign_of(err)};
}
inline Exact exact_product(double a, double b) {
  const double p = a * b;
  if (!std::isfinite(p)) return {p, 0};
  return {p, sign_of(std::fma(a, b, -p))};
}
inline Exact exact_quotient(double a, double b) {
  const double q = a / b;
  if (!std::isfinite(q) || b == 0.0 || std::isinf(b)) return {q, 0};
  return {q, sign_of(std::fma(-q, b, a)) * sign_of(b)};
}
inline Exact exact_sqrt(double a) {
  const double s = std::sqrt(a);
  if (!std::isfinite(s) || s == 0.0) return {s, 0};
  return {s, sign_of(std::fma(-s, s, a))};
}
// a * b + c where a * b is exact in double (operands of at most 26 significant bits: float, half, bfloat16).
inline Exact exact_fma_narrow(double a, double b, double c) { return exact_sum(a * b, c); }

// A double result in a directed mode, from its round-to-nearest value and residual.
inline double round_double(Exact x, Round mode) {
  if (x.residual == 0 || mode == Round::nearest) return x.value;
  const bool up = mode == Round::up || (mode == Round::zero && x.value < 0);
  if (up && x.residual > 0) return std::nextafter(x.value, INFINITY);
  if (!up && x.residual < 0) return std::nextafter(x.value, -INFINITY);
  return x.value;
}

inline float to_float(Exact x, Round mode) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(round_bits(x, k_float, mode)));
}

// Float to integer as cvt.rni/rzi/rmi/rpi: rounded in the mode, clamped to the type, NaN to 0.
template <class Int>
inline Int to_integer(double v, Round mode) {
  if (v != v) return 0;
  double r = v;
  if (mode == Round::nearest) {
    r = std::nearbyint(v);
  } else if (mode == Round::zero) {
    r = std::trunc(v);
  } else if (mode == Round::down) {
    r = std::floor(v);
  } else {
    r = std::ceil(v);
  }
  constexpr double lo = static_cast<double>(std::numeric_limits<Int>::min());
  constexpr double hi_exclusive = static_cast<double>(std::numeric_limits<Int>::max()) + 1.0;  // a power of two
  if (r <= lo) return std::numeric_limits<Int>::min();
  if (r >= hi_exclusive) return std::numeric_limits<Int>::max();
  return static_cast<Int>(r);
}

// A 64-bit integer as an exact double-plus-residual (GCC's and Clang's 128-bit integers hold the difference).
__extension__ typedef __int128 wide_int;
inline Exact exact_from_integer(long long x) {
  const double d = static_cast<double>(x);
  const wide_int diff = static_cast<wide_int>(x) - static_cast<wide_int>(d);
  return {d, (diff > 0) - (diff < 0)};
}
inline Exact exact_from_integer(unsigned long long x) {
  const double d = static_cast<double>(x);
  const wide_int diff = static_cast<wide_int>(x) - static_cast<wide_int>(d);
  return {d, (diff > 0) - (diff < 0)};
}

}  // namespace leap_cpu::detail

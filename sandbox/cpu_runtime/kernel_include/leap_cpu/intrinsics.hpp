// SPDX-License-Identifier: Apache-2.0
// CUDA's device functions that have no host twin in <cmath>: the float and double intrinsics (with
// their rounding modes, leap_cpu/rounding.hpp), the fast-math intrinsics, the extra math functions
// (rsqrtf, sinpif, normcdff, erfinvf, ...), conversions and bit casts, the integer intrinsics, CUDA's
// min/max overloads, and the cache-hinted loads and stores.
//
// Results agree with the device where the device is exact (IEEE operations, conversions, integer
// intrinsics, bit casts). The device's approximate instructions (__expf, __sinf, rsqrtf, __fdividef's
// reciprocal, ex2.approx behind expf's fast path) are computed here with the host's correctly rounded
// or libm functions, so they may differ in the last bits; tolerances absorb that, bit-for-bit tests
// should avoid them.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "leap_cpu/rounding.hpp"

// ---- bit casts ---------------------------------------------------------------------------------------
inline int __float_as_int(float x) { return std::bit_cast<int>(x); }
inline unsigned int __float_as_uint(float x) { return std::bit_cast<unsigned int>(x); }
inline float __int_as_float(int x) { return std::bit_cast<float>(x); }
inline float __uint_as_float(unsigned int x) { return std::bit_cast<float>(x); }
inline long long __double_as_longlong(double x) { return std::bit_cast<long long>(x); }
inline double __longlong_as_double(long long x) { return std::bit_cast<double>(x); }
inline int __double2hiint(double x) { return static_cast<int>(std::bit_cast<unsigned long long>(x) >> 32); }
inline int __double2loint(double x) { return static_cast<int>(std::bit_cast<unsigned long long>(x)); }
inline double __hiloint2double(int hi, int lo) {
  return std::bit_cast<double>((static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) |
                               static_cast<unsigned>(lo));
}

// ---- float and double arithmetic in each rounding mode -----------------------------------------------
#define LEAP_CPU_FLOAT_MODES(suffix, mode)                                                                       \
  inline float __fadd_##suffix(float a, float b) {                                                               \
    return ::leap_cpu::detail::to_float(::leap_cpu::detail::exact_sum(a, b), mode);                              \
  }                                                                                                              \
  inline float __fsub_##suffix(float a, float b) {                                                               \
    return ::leap_cpu::detail::to_float(::leap_cpu::detail::exact_sum(a, -static_cast<double>(b)), mode);        \
  }                                                                                                              \
  inline float __fmul_##suffix(float a, float b) {                                                               \
    return ::leap_cpu::detail::to_float(::leap_cpu::detail::exact_product(a, b), mode);                          \
  }                                                                                                              \
  inline float __fdiv_##suffix(float a, float b) {                                                               \
    return ::leap_cpu::detail::to_float(::leap_cpu::detail::exact_quotient(a, b), mode);                         \
  }                                                                                                              \
  inline float __frcp_##suffix(float a) {                                                                        \
    return ::leap_cpu::detail::to_float(::leap_cpu::detail::exact_quotient(1.0, a), mode);                       \
  }                                                                                                              \
  inline float __fsqrt_##suffix(float a) {                                                                       \
    return ::leap_cpu::detail::to_float(::leap_cpu::detail::exact_sqrt(a), mode);                                \
  }                                                                                                              \
  inline float __fmaf_##suffix(float a, float b, float c) {                                                      \
    return ::leap_cpu::detail::to_float(::leap_cpu::detail::exact_fma_narrow(a, b, c), mode);                    \
  }                                                                                                              \
  inline double __dadd_##suffix(double a, double b) {                                                            \
    return ::leap_cpu::detail::round_double(::leap_cpu::detail::exact_sum(a, b), mode);                          \
  }                                                                                                              \
  inline double __dsub_##suffix(double a, double b) {                                                            \
    return ::leap_cpu::detail::round_double(::leap_cpu::detail::exact_sum(a, -b), mode);                         \
  }                                                                                                              \
  inline double __dmul_##suffix(double a, double b) {                                                            \
    return ::leap_cpu::detail::round_double(::leap_cpu::detail::exact_product(a, b), mode);                      \
  }                                                                                                              \
  inline double __ddiv_##suffix(double a, double b) {                                                            \
    return ::leap_cpu::detail::round_double(::leap_cpu::detail::exact_quotient(a, b), mode);                     \
  }                                                                                                              \
  inline double __drcp_##suffix(double a) {                                                                      \
    return ::leap_cpu::detail::round_double(::leap_cpu::detail::exact_quotient(1.0, a), mode);                   \
  }                                                                                                              \
  inline double __dsqrt_##suffix(double a) {                                                                     \
    return ::leap_cpu::detail::round_double(::leap_cpu::detail::exact_sqrt(a), mode);                            \
  }                                                                                                              \
  inline float __double2float_##suffix(double a) { return ::leap_cpu::detail::to_float({a, 0}, mode); }          \
  inline int __float2int_##suffix(float a) { return ::leap_cpu::detail::to_integer<int>(a, mode); }              \
  inline unsigned __float2uint_##suffix(float a) { return ::leap_cpu::detail::to_integer<unsigned>(a, mode); }   \
  inline long long __float2ll_##suffix(float a) { return ::leap_cpu::detail::to_integer<long long>(a, mode); }   \
  inline unsigned long long __float2ull_##suffix(float a) {                                                      \
    return ::leap_cpu::detail::to_integer<unsigned long long>(a, mode);                                          \
  }                                                                                                              \
  inline int __double2int_##suffix(double a) { return ::leap_cpu::detail::to_integer<int>(a, mode); }            \
  inline unsigned __double2uint_##suffix(double a) { return ::leap_cpu::detail::to_integer<unsigned>(a, mode); } \
  inline long long __double2ll_##suffix(double a) { return ::leap_cpu::detail::to_integer<long long>(a, mode); } \
  inline unsigned long long __double2ull_##suffix(double a) {                                                    \
    return ::leap_cpu::detail::to_integer<unsigned long long>(a, mode);                                          \
  }                                                                                                              \
  inline float __int2float_##suffix(int a) { return ::leap_cpu::detail::to_float({double(a), 0}, mode); }        \
  inline float __uint2float_##suffix(unsigned a) { return ::leap_cpu::detail::to_float({double(a), 0}, mode); }  \
  inline float __ll2float_##suffix(long long a) {                                                                \
    return ::leap_cpu::detail::to_float(::leap_cpu::detail::exact_from_integer(a), mode);                        \
  }                                                                                                              \
  inline float __ull2float_##suffix(unsigned long long a) {                                                      \
    return ::leap_cpu::detail::to_float(::leap_cpu::detail::exact_from_integer(a), mode);                        \
  }                                                                                                              \
  inline double __ll2double_##suffix(long long a) {                                                              \
    return ::leap_cpu::detail::round_double(::leap_cpu::detail::exact_from_integer(a), mode);                    \
  }                                                                                                              \
  inline double __ull2double_##suffix(unsigned long long a) {                                                    \
    return ::leap_cpu::detail::round_double(::leap_cpu::detail::exact_from_integer(a), mode);                    \
  }
LEAP_CPU_FLOAT_MODES(rn, ::leap_cpu::detail::Round::nearest)
LEAP_CPU_FLOAT_MODES(rz, ::leap_cpu::detail::Round::zero)
LEAP_CPU_FLOAT_MODES(rd, ::leap_cpu::detail::Round::down)
LEAP_CPU_FLOAT_MODES(ru, ::leap_cpu::detail::Round::up)
#undef LEAP_CPU_FLOAT_MODES
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline double __int2double_rn(int a) { return a; }
inline double __uint2double_rn(unsigned a) { return a; }
inline float __frsqrt_rn(float a) { return __frcp_rn(__fsqrt_rn(a)); }  // not correctly rounded on the device either
inline float __saturatef(float x) { return x != x ? 0.0f : (x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x)); }
inline float saturate(float x) { return __saturatef(x); }

// ---- fast-math intrinsics (approximate on the device) ------------------------------------------------
inline float __expf(float x) { return exp2f(x * 1.44269504088896340736f); }
inline float __exp10f(float x) { return exp2f(x * 3.32192809488736234787f); }
inline float __logf(float x) { return log2f(x) * 0.693147180559945309417f; }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log2f(x) * 0.301029995663981195214f; }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) { *s = sinf(x), *c = cosf(x); }
inline float __powf(float x, float y) { return exp2f(y * log2f(x)); }
inline float __fdividef(float x, float y) {
  const float ay = y < 0 ? -y : y;  // the device's reciprocal underflows to 0 for 2^126 < |y| < 2^128
  if (ay > 8.50705917e37f && ay <= 3.40282347e38f && x == x && x - x == 0.0f) return 0.0f * x;
  return x / y;
}
inline float fdividef(float x, float y) { return __fdividef(x, y); }
inline float __tanhf(float x) { return tanhf(x); }

// ---- math functions CUDA adds to <cmath> -------------------------------------------------------------
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline double rcbrt(double x) { return 1.0 / std::cbrt(x); }
inline float exp10f(float x) { return static_cast<float>(std::pow(10.0, static_cast<double>(x))); }
inline float sinpif(float x) { return static_cast<float>(std::sin(3.14159265358979323846 * x)); }
inline float cospif(float x) { return static_cast<float>(std::cos(3.14159265358979323846 * x)); }
inline void sincospif(float x, float* s, float* c) { *s = sinpif(x), *c = cospif(x); }
inline double sinpi(double x) { return std::sin(3.14159265358979323846 * x); }
inline double cospi(double x) { return std::cos(3.14159265358979323846 * x); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * 0.707106781186547524401f); }
inline double normcdf(double x) { return 0.5 * std::erfc(-x * 0.707106781186547524401); }
inline double erfinv(double y) {
  if (y <= -1.0) return y == -1.0 ? -INFINITY : NAN;
  if (y >= 1.0) return y == 1.0 ? INFINITY : NAN;
  // Giles' single-precision start, then Newton steps on erf in double.
  const double w = -std::log((1.0 - y) * (1.0 + y));
  double x = 0.0;
  if (w < 5.0) {
    const double v = w - 2.5;
    x = ((((((((2.81022636e-08 * v + 3.43273939e-07) * v - 3.5233877e-06) * v - 4.39150654e-06) * v + 0.00021858087) *
                v -
            0.00125372503) *
               v -
           0.00417768164) *
              v +
          0.246640727) *
             v +
         1.50140941) *
        y;
  } else {
    const double v = std::sqrt(w) - 3.0;
    x = ((((((((-0.000200214257 * v + 0.000100950558) * v + 0.00134934322) * v - 0.00367342844) * v + 0.00573950773) *
                v -
            0.0076224613) *
               v +
           0.00943887047) *
              v +
          1.00167406) *
             v +
         2.83297682) *
        y;
  }
  for (int i = 0; i < 3; ++i) x -= (std::erf(x) - y) / (1.12837916709551257390 * std::exp(-x * x));
  return x;
}
inline float erfinvf(float y) { return static_cast<float>(erfinv(y)); }
inline double erfcinv(double y) { return erfinv(1.0 - y); }
inline float erfcinvf(float y) { return static_cast<float>(erfcinv(y)); }
inline double normcdfinv(double y) { return -1.41421356237309504880 * erfcinv(2.0 * y); }
inline float normcdfinvf(float y) { return static_cast<float>(normcdfinv(y)); }
inline float rhypotf(float x, float y) { return 1.0f / hypotf(x, y); }
inline float norm3df(float a, float b, float c) {
  return static_cast<float>(std::sqrt(double(a) * a + double(b) * b + double(c) * c));
}
inline float rnorm3df(float a, float b, float c) { return 1.0f / norm3df(a, b, c); }
inline float norm4df(float a, float b, float c, float d) {
  return static_cast<float>(std::sqrt(double(a) * a + double(b) * b + double(c) * c + double(d) * d));
}
inline float rnorm4df(float a, float b, float c, float d) { return 1.0f / norm4df(a, b, c, d); }

// ---- CUDA's min and max ------------------------------------------------------------------------------
// As crt/math_functions.hpp declares them: same-type overloads, and mixed signed/unsigned ones that
// compare as unsigned.
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline unsigned min(int a, unsigned b) { return min(static_cast<unsigned>(a), b); }
inline unsigned max(int a, unsigned b) { return max(static_cast<unsigned>(a), b); }
inline unsigned min(unsigned a, int b) { return min(a, static_cast<unsigned>(b)); }
inline unsigned max(unsigned a, int b) { return max(a, static_cast<unsigned>(b)); }
inline long min(long a, long b) { return a < b ? a : b; }
inline long max(long a, long b) { return a > b ? a : b; }
inline unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
inline unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
inline unsigned long long min(long long a, unsigned long long b) { return min(static_cast<unsigned long long>(a), b); }
inline unsigned long long max(long long a, unsigned long long b) { return max(static_cast<unsigned long long>(a), b); }
inline unsigned long long min(unsigned long long a, long long b) { return min(a, static_cast<unsigned long long>(b)); }
inline unsigned long long max(unsigned long long a, long long b) { return max(a, static_cast<unsigned long long>(b)); }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(float a, double b) { return fmin(a, b); }
inline double max(float a, double b) { return fmax(a, b); }
inline double min(double a, float b) { return fmin(a, b); }
inline double max(double a, float b) { return fmax(a, b); }
inline unsigned umin(unsigned a, unsigned b) { return min(a, b); }
inline unsigned umax(unsigned a, unsigned b) { return max(a, b); }
inline long long llmin(long long a, long long b) { return min(a, b); }
inline long long llmax(long long a, long long b) { return max(a, b); }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return min(a, b); }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return max(a, b); }

// ---- integer intrinsics --------------------------------------------------------------------------------
inline int __popc(unsigned int x) { return std::popcount(x); }
inline int __popcll(unsigned long long x) { return std::popcount(x); }
inline int __clz(int x) { return std::countl_zero(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return std::countl_zero(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned>(x)) + 1; }
inline int __ffsll(long long x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned long long>(x)) + 1; }
inline unsigned int __brev(unsigned int x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
  x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
  return (x >> 16) | (x << 16);
}
inline unsigned long long __brevll(unsigned long long x) {
  return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) |
         __brev(static_cast<unsigned>(x >> 32));
}
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  const unsigned long long v = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned int r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<unsigned>((v >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return r;
}
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>((v << (shift & 31)) >> 32);
}
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>((v << (shift < 32 ? shift : 32)) >> 32);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>(v >> (shift & 31));
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
  const unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>(v >> (shift < 32 ? shift : 32));
}
inline int __mul24(int x, int y) {
  const long long a = static_cast<int>(static_cast<unsigned>(x) << 8) >> 8;  // the low 24 bits, sign-extended
  const long long b = static_cast<int>(static_cast<unsigned>(y) << 8) >> 8;
  return static_cast<int>(static_cast<unsigned>(a * b));
}
inline unsigned int __umul24(unsigned int x, unsigned int y) { return (x & 0xFFFFFFu) * (y & 0xFFFFFFu); }
inline int __mulhi(int x, int y) { return static_cast<int>((static_cast<long long>(x) * y) >> 32); }
inline unsigned int __umulhi(unsigned int x, unsigned int y) {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) * y) >> 32);
}
inline long long __mul64hi(long long x, long long y) {
  return static_cast<long long>((static_cast<__int128>(x) * y) >> 64);
}
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(x) * y) >> 64);
}
inline unsigned int __sad(int x, int y, unsigned int z) {
  return z + static_cast<unsigned>(x > y ? static_cast<long long>(x) - y : static_cast<long long>(y) - x);
}
inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return z + (x > y ? x - y : y - x); }
inline int __hadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y) >> 1); }
inline int __rhadd(int x, int y) { return static_cast<int>((static_cast<long long>(x) + y + 1) >> 1); }
inline unsigned int __uhadd(unsigned int x, unsigned int y) {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) + y) >> 1);
}
inline unsigned int __urhadd(unsigned int x, unsigned int y) {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) + y + 1) >> 1);
}
inline int __dp4a(int a, int b, int c) {
  int r = c;
  for (int i = 0; i < 4; ++i) r += static_cast<signed char>(a >> (8 * i)) * static_cast<signed char>(b >> (8 * i));
  return r;
}
inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
  unsigned r = c;
  for (int i = 0; i < 4; ++i) r += ((a >> (8 * i)) & 0xFF) * ((b >> (8 * i)) & 0xFF);
  return r;
}

// ---- loads and stores with cache hints: plain accesses here ------------------------------------------
template <class T>
inline T __ldg(const T* p) {
  return *p;
}
template <class T>
inline T __ldcg(const T* p) {
  return *p;
}
template <class T>
inline T __ldca(const T* p) {
  return *p;
}
template <class T>
inline T __ldcs(const T* p) {
  return *p;
}
template <class T>
inline T __ldlu(const T* p) {
  return *p;
}
template <class T>
inline T __ldcv(const T* p) {
  return *p;
}
template <class T>
inline void __stwb(T* p, T v) {
  *p = v;
}
template <class T>
inline void __stcg(T* p, T v) {
  *p = v;
}
template <class T>
inline void __stcs(T* p, T v) {
  *p = v;
}
template <class T>
inline void __stwt(T* p, T v) {
  *p = v;
}

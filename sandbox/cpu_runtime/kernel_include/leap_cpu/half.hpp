// SPDX-License-Identifier: Apache-2.0
// __half and __half2 (cuda_fp16.h) with the device's layout and semantics: IEEE binary16, conversions
// from float and double rounded to nearest even (a NaN becomes 0x7fff, as cvt.rn.f16 writes it),
// arithmetic rounded once, the implicit conversions CUDA's struct allows, and the shared API of
// narrow_api.inc (arithmetic, comparisons, math, conversions in every mode, atomicAdd).
#pragma once

#include <cmath>

#include "leap_cpu/atomics.hpp"
#include "leap_cpu/rounding.hpp"
#include "leap_cpu/vector_types.hpp"

struct __half_raw {
  unsigned short x;
};
struct __half2_raw {
  unsigned short x, y;
};

struct __half;
inline __half __float2half(float f);
inline __half __double2half(double d);
inline float __half2float(__half h);
inline __half __int2half_rn(int i);
inline __half __uint2half_rn(unsigned int i);
inline __half __short2half_rn(short i);
inline __half __ushort2half_rn(unsigned short i);
inline __half __ll2half_rn(long long i);
inline __half __ull2half_rn(unsigned long long i);
inline int __half2int_rz(__half h);
inline unsigned int __half2uint_rz(__half h);
inline short __half2short_rz(__half h);
inline unsigned short __half2ushort_rz(__half h);
inline long long __half2ll_rz(__half h);
inline unsigned long long __half2ull_rz(__half h);

struct alignas(2) __half {
 protected:
  unsigned short __x;

 public:
  __half() = default;
  constexpr __half(const __half_raw& r) : __x(r.x) {}
  __half& operator=(const __half_raw& r) {
    __x = r.x;
    return *this;
  }
  operator __half_raw() const { return __half_raw{__x}; }
  __half(float f) : __x(__float2half(f).__x) {}
  __half(double d) : __x(__double2half(d).__x) {}
  __half(short v) : __x(__short2half_rn(v).__x) {}
  __half(unsigned short v) : __x(__ushort2half_rn(v).__x) {}
  __half(int v) : __x(__int2half_rn(v).__x) {}
  __half(unsigned int v) : __x(__uint2half_rn(v).__x) {}
  __half(long v) : __x(__ll2half_rn(v).__x) {}
  __half(unsigned long v) : __x(__ull2half_rn(v).__x) {}
  __half(long long v) : __x(__ll2half_rn(v).__x) {}
  __half(unsigned long long v) : __x(__ull2half_rn(v).__x) {}
  operator float() const { return __half2float(*this); }
  operator signed char() const { return static_cast<signed char>(__half2int_rz(*this)); }
  operator unsigned char() const { return static_cast<unsigned char>(__half2uint_rz(*this)); }
  operator char() const { return static_cast<char>(__half2int_rz(*this)); }
  operator short() const { return __half2short_rz(*this); }
  operator unsigned short() const { return __half2ushort_rz(*this); }
  operator int() const { return __half2int_rz(*this); }
  operator unsigned int() const { return __half2uint_rz(*this); }
  operator long() const { return __half2ll_rz(*this); }
  operator unsigned long() const { return __half2ull_rz(*this); }
  operator long long() const { return __half2ll_rz(*this); }
  operator unsigned long long() const { return __half2ull_rz(*this); }
  constexpr operator bool() const { return (__x & 0x7FFFu) != 0; }
  __half& operator=(float f) { return *this = __half(f); }
  __half& operator=(double d) { return *this = __half(d); }
  __half& operator=(int v) { return *this = __half(v); }
  __half& operator=(unsigned int v) { return *this = __half(v); }
  __half& operator=(long long v) { return *this = __half(v); }
  __half& operator=(unsigned long long v) { return *this = __half(v); }
  __half& operator=(short v) { return *this = __half(v); }
  __half& operator=(unsigned short v) { return *this = __half(v); }
};

struct alignas(4) __half2 {
  __half x, y;
  __half2() = default;
  constexpr __half2(const __half& a, const __half& b) : x(a), y(b) {}
  constexpr __half2(const __half2_raw& r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
  __half2& operator=(const __half2_raw& r) { return *this = __half2(r); }
  operator __half2_raw() const { return __half2_raw{static_cast<__half_raw>(x).x, static_cast<__half_raw>(y).x}; }
};

typedef __half half;
typedef __half2 half2;
typedef __half_raw half_raw;
typedef __half2_raw half2_raw;

#define LEAP_N __half
#define LEAP_N2 __half2
#define LEAP_RAW __half_raw
#define LEAP_RAW2 __half2_raw
#define LEAP_W half
#define LEAP_W2 half2
#define LEAP_FMT ::leap_cpu::detail::k_half
#include "leap_cpu/narrow_api.inc"
#undef LEAP_N
#undef LEAP_N2
#undef LEAP_RAW
#undef LEAP_RAW2
#undef LEAP_W
#undef LEAP_W2
#undef LEAP_FMT

#define CUDART_INF_FP16 __ushort_as_half(static_cast<unsigned short>(0x7C00U))
#define CUDART_NAN_FP16 __ushort_as_half(static_cast<unsigned short>(0x7FFFU))
#define CUDART_MIN_DENORM_FP16 __ushort_as_half(static_cast<unsigned short>(0x0001U))
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half(static_cast<unsigned short>(0x7BFFU))
#define CUDART_NEG_ZERO_FP16 __ushort_as_half(static_cast<unsigned short>(0x8000U))
#define CUDART_ZERO_FP16 __ushort_as_half(static_cast<unsigned short>(0x0000U))
#define CUDART_ONE_FP16 __ushort_as_half(static_cast<unsigned short>(0x3C00U))

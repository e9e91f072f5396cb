// SPDX-License-Identifier: Apache-2.0
// __nv_bfloat16 and __nv_bfloat162 (cuda_bf16.h) with the device's layout and semantics: the upper 16
// bits of a float, conversions rounded to nearest even (a NaN becomes 0x7fff, as cvt.rn.bf16 writes
// it), arithmetic rounded once, the implicit conversions CUDA's struct allows, and the shared API of
// narrow_api.inc. Includes half.hpp, as cuda_bf16.h includes cuda_fp16.h.
#pragma once

#include "leap_cpu/half.hpp"

#include <cmath>

#include "leap_cpu/atomics.hpp"
#include "leap_cpu/rounding.hpp"
#include "leap_cpu/vector_types.hpp"

struct __nv_bfloat16_raw {
  unsigned short x;
};
struct __nv_bfloat162_raw {
  unsigned short x, y;
};

struct __nv_bfloat16;
inline __nv_bfloat16 __float2bfloat16(float f);
inline __nv_bfloat16 __double2bfloat16(double d);
inline float __bfloat162float(__nv_bfloat16 h);
inline __nv_bfloat16 __int2bfloat16_rn(int i);
inline __nv_bfloat16 __uint2bfloat16_rn(unsigned int i);
inline __nv_bfloat16 __short2bfloat16_rn(short i);
inline __nv_bfloat16 __ushort2bfloat16_rn(unsigned short i);
inline __nv_bfloat16 __ll2bfloat16_rn(long long i);
inline __nv_bfloat16 __ull2bfloat16_rn(unsigned long long i);
inline int __bfloat162int_rz(__nv_bfloat16 h);
inline unsigned int __bfloat162uint_rz(__nv_bfloat16 h);
inline short __bfloat162short_rz(__nv_bfloat16 h);
inline unsigned short __bfloat162ushort_rz(__nv_bfloat16 h);
inline long long __bfloat162ll_rz(__nv_bfloat16 h);
inline unsigned long long __bfloat162ull_rz(__nv_bfloat16 h);

struct alignas(2) __nv_bfloat16 {
 protected:
  unsigned short __x;

 public:
  __nv_bfloat16() = default;
  constexpr __nv_bfloat16(const __nv_bfloat16_raw& r) : __x(r.x) {}
  __nv_bfloat16& operator=(const __nv_bfloat16_raw& r) {
    __x = r.x;
    return *this;
  }
  operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
  __nv_bfloat16(float f) : __x(__float2bfloat16(f).__x) {}
  __nv_bfloat16(double d) : __x(__double2bfloat16(d).__x) {}
  __nv_bfloat16(short v) : __x(__short2bfloat16_rn(v).__x) {}
  __nv_bfloat16(unsigned short v) : __x(__ushort2bfloat16_rn(v).__x) {}
  __nv_bfloat16(int v) : __x(__int2bfloat16_rn(v).__x) {}
  __nv_bfloat16(unsigned int v) : __x(__uint2bfloat16_rn(v).__x) {}
  __nv_bfloat16(long v) : __x(__ll2bfloat16_rn(v).__x) {}
  __nv_bfloat16(unsigned long v) : __x(__ull2bfloat16_rn(v).__x) {}
  __nv_bfloat16(long long v) : __x(__ll2bfloat16_rn(v).__x) {}
  __nv_bfloat16(unsigned long long v) : __x(__ull2bfloat16_rn(v).__x) {}
  operator float() const { return __bfloat162float(*this); }
  operator signed char() const { return static_cast<signed char>(__bfloat162int_rz(*this)); }
  operator unsigned char() const { return static_cast<unsigned char>(__bfloat162uint_rz(*this)); }
  operator char() const { return static_cast<char>(__bfloat162int_rz(*this)); }
  operator short() const { return __bfloat162short_rz(*this); }
  operator unsigned short() const { return __bfloat162ushort_rz(*this); }
  operator int() const { return __bfloat162int_rz(*this); }
  operator unsigned int() const { return __bfloat162uint_rz(*this); }
  operator long() const { return __bfloat162ll_rz(*this); }
  operator unsigned long() const { return __bfloat162ull_rz(*this); }
  operator long long() const { return __bfloat162ll_rz(*this); }
  operator unsigned long long() const { return __bfloat162ull_rz(*this); }
  constexpr operator bool() const { return (__x & 0x7FFFu) != 0; }
  __nv_bfloat16& operator=(float f) { return *this = __nv_bfloat16(f); }
  __nv_bfloat16& operator=(double d) { return *this = __nv_bfloat16(d); }
  __nv_bfloat16& operator=(int v) { return *this = __nv_bfloat16(v); }
  __nv_bfloat16& operator=(unsigned int v) { return *this = __nv_bfloat16(v); }
  __nv_bfloat16& operator=(long long v) { return *this = __nv_bfloat16(v); }
  __nv_bfloat16& operator=(unsigned long long v) { return *this = __nv_bfloat16(v); }
  __nv_bfloat16& operator=(short v) { return *this = __nv_bfloat16(v); }
  __nv_bfloat16& operator=(unsigned short v) { return *this = __nv_bfloat16(v); }
};

struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
  __nv_bfloat162() = default;
  constexpr __nv_bfloat162(const __nv_bfloat16& a, const __nv_bfloat16& b) : x(a), y(b) {}
  constexpr __nv_bfloat162(const __nv_bfloat162_raw& r) : x(__nv_bfloat16_raw{r.x}), y(__nv_bfloat16_raw{r.y}) {}
  __nv_bfloat162& operator=(const __nv_bfloat162_raw& r) { return *this = __nv_bfloat162(r); }
  operator __nv_bfloat162_raw() const {
    return __nv_bfloat162_raw{static_cast<__nv_bfloat16_raw>(x).x, static_cast<__nv_bfloat16_raw>(y).x};
  }
};

typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;
typedef __nv_bfloat16_raw nv_bfloat16_raw;
typedef __nv_bfloat162_raw nv_bfloat162_raw;

#define LEAP_N __nv_bfloat16
#define LEAP_N2 __nv_bfloat162
#define LEAP_RAW __nv_bfloat16_raw
#define LEAP_RAW2 __nv_bfloat162_raw
#define LEAP_W bfloat16
#define LEAP_W2 bfloat162
#define LEAP_FMT ::leap_cpu::detail::k_bfloat16
#include "leap_cpu/narrow_api.inc"
#undef LEAP_N
#undef LEAP_N2
#undef LEAP_RAW
#undef LEAP_RAW2
#undef LEAP_W
#undef LEAP_W2
#undef LEAP_FMT

#define CUDART_INF_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x7F80U))
#define CUDART_NAN_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x7FFFU))
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x0001U))
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x7F7FU))
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x8000U))
#define CUDART_ZERO_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x0000U))
#define CUDART_ONE_BF16 __ushort_as_bfloat16(static_cast<unsigned short>(0x3F80U))

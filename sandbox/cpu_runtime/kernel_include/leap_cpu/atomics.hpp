// SPDX-License-Identifier: Apache-2.0
// CUDA's atomics on the host: read-modify-writes with the compiler's __atomic builtins, so they hold
// when the blocks of a launch run on several OS threads. Each returns the old value, as on the device.
// Relaxed order, as CUDA's atomics are; __threadfence orders around them. float atomicAdd flushes
// subnormal inputs and results to zero as atom.add.f32 does; the others round to nearest even.
// The _block and _system scopes are the same operations here.
#pragma once

#include <bit>
#include <cstdint>

namespace leap_cpu::detail {

template <class T>
T atomic_fetch(T* p, T v, int op) {
  switch (op) {
    case 0: return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
    case 1: return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED);
    case 2: return __atomic_fetch_and(p, v, __ATOMIC_RELAXED);
    case 3: return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
    case 4: return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED);
    default: return __atomic_exchange_n(p, v, __ATOMIC_RELAXED);
  }
}

// Replaces *p by f(old) atomically; returns old. Bits is the unsigned integer of T's size.
template <class T, class Bits, class F>
T atomic_update(T* p, F f) {
  Bits* q = reinterpret_cast<Bits*>(p);
  Bits old = __atomic_load_n(q, __ATOMIC_RELAXED);
  for (;;) {
    const Bits next = std::bit_cast<Bits>(f(std::bit_cast<T>(old)));
    if (__atomic_compare_exchange_n(q, &old, next, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      return std::bit_cast<T>(old);
  }
}

template <class T>
T atomic_cas(T* p, T compare, T value) {
  __atomic_compare_exchange_n(p, &compare, value, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return compare;  // the old value either way
}

inline float flush_subnormal(float x) {
  return (std::bit_cast<std::uint32_t>(x) & 0x7F800000u) == 0
             ? std::bit_cast<float>(std::bit_cast<std::uint32_t>(x) & 0x80000000u)
             : x;
}

}  // namespace leap_cpu::detail

#define LEAP_CPU_ATOMIC_INT(type)                                                                                \
  inline type atomicAdd(type* p, type v) { return ::leap_cpu::detail::atomic_fetch(p, v, 0); }                   \
  inline type atomicAnd(type* p, type v) { return ::leap_cpu::detail::atomic_fetch(p, v, 2); }                   \
  inline type atomicOr(type* p, type v) { return ::leap_cpu::detail::atomic_fetch(p, v, 3); }                    \
  inline type atomicXor(type* p, type v) { return ::leap_cpu::detail::atomic_fetch(p, v, 4); }                   \
  inline type atomicExch(type* p, type v) { return ::leap_cpu::detail::atomic_fetch(p, v, 5); }                  \
  inline type atomicCAS(type* p, type compare, type v) { return ::leap_cpu::detail::atomic_cas(p, compare, v); } \
  inline type atomicMin(type* p, type v) {                                                                       \
    return ::leap_cpu::detail::atomic_update<type, type>(p, [v](type o) { return o < v ? o : v; });              \
  }                                                                                                              \
  inline type atomicMax(type* p, type v) {                                                                       \
    return ::leap_cpu::detail::atomic_update<type, type>(p, [v](type o) { return o > v ? o : v; });              \
  }
LEAP_CPU_ATOMIC_INT(int)
LEAP_CPU_ATOMIC_INT(unsigned int)
LEAP_CPU_ATOMIC_INT(unsigned long long int)
LEAP_CPU_ATOMIC_INT(long long int)
#undef LEAP_CPU_ATOMIC_INT

inline int atomicSub(int* p, int v) { return ::leap_cpu::detail::atomic_fetch(p, v, 1); }
inline unsigned int atomicSub(unsigned int* p, unsigned int v) { return ::leap_cpu::detail::atomic_fetch(p, v, 1); }
inline unsigned short int atomicCAS(unsigned short int* p, unsigned short int compare, unsigned short int v) {
  return ::leap_cpu::detail::atomic_cas(p, compare, v);
}
// ((old >= val) ? 0 : old + 1) and (((old == 0) || (old > val)) ? val : old - 1), as the guide defines them.
inline unsigned int atomicInc(unsigned int* p, unsigned int v) {
  return ::leap_cpu::detail::atomic_update<unsigned, unsigned>(p, [v](unsigned o) { return o >= v ? 0u : o + 1; });
}
inline unsigned int atomicDec(unsigned int* p, unsigned int v) {
  return ::leap_cpu::detail::atomic_update<unsigned, unsigned>(p,
                                                               [v](unsigned o) { return o == 0 || o > v ? v : o - 1; });
}
inline float atomicAdd(float* p, float v) {
  return ::leap_cpu::detail::atomic_update<float, std::uint32_t>(p, [v](float o) {
    return ::leap_cpu::detail::flush_subnormal(::leap_cpu::detail::flush_subnormal(o) +
                                               ::leap_cpu::detail::flush_subnormal(v));
  });
}
inline double atomicAdd(double* p, double v) {
  return ::leap_cpu::detail::atomic_update<double, std::uint64_t>(p, [v](double o) { return o + v; });
}
inline float atomicExch(float* p, float v) {
  return std::bit_cast<float>(
      __atomic_exchange_n(reinterpret_cast<std::uint32_t*>(p), std::bit_cast<std::uint32_t>(v), __ATOMIC_RELAXED));
}

// The scoped spellings (sm_60): the same operations.
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicSub_block atomicSub
#define atomicSub_system atomicSub
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch
#define atomicMin_block atomicMin
#define atomicMin_system atomicMin
#define atomicMax_block atomicMax
#define atomicMax_system atomicMax
#define atomicInc_block atomicInc
#define atomicInc_system atomicInc
#define atomicDec_block atomicDec
#define atomicDec_system atomicDec
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicAnd_block atomicAnd
#define atomicAnd_system atomicAnd
#define atomicOr_block atomicOr
#define atomicOr_system atomicOr
#define atomicXor_block atomicXor
#define atomicXor_system atomicXor

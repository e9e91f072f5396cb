// SPDX-License-Identifier: Apache-2.0
// Inputs for timed runs, drawn on the device by a kernel the harness compiles itself (NVRTC), so no
// timed run sees inputs a candidate could have recorded. The same code is compiled here for the
// host: the CPU fake of the driver draws with it. Counter-based (value i depends only on seed and
// i) and free of transcendental functions and fused multiply-adds, so host and device should agree
// bit for bit; the harness does not rely on it (it re-checks inputs against a second device draw).
// Internal.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox::detail {

// The code below is compiled twice: here (LEAP_HD = inline) and by NVRTC as the text of the same
// macro argument, with LEAP_HD = __device__ and float bits through __float_as_uint.
#define LEAP_SHARED_GENERATOR(...) \
  __VA_ARGS__                      \
  inline constexpr const char k_input_generator_code[] = #__VA_ARGS__;
#define LEAP_HD inline
#define LEAP_FBITS(x) std::bit_cast<unsigned int>(x)
#define LEAP_ADD(x, y) ((x) + (y))
#define LEAP_MUL(x, y) ((x) * (y))
#define LEAP_DIV(x, y) ((x) / (y))

LEAP_SHARED_GENERATOR(
    LEAP_HD unsigned long long leap_gen_mix(unsigned long long z) {
      z += 0x9E3779B97F4A7C15ULL;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      return z ^ (z >> 31);
    } LEAP_HD unsigned long long leap_gen_bits(unsigned long long seed, unsigned long long i) {
      return leap_gen_mix(seed ^ leap_gen_mix(i));
    } LEAP_HD float leap_gen_unit(unsigned long long seed, unsigned long long i) {
      return LEAP_MUL(static_cast<float>(static_cast<unsigned int>(leap_gen_bits(seed, i) >> 40)),
                      5.9604644775390625e-8f);
    } LEAP_HD unsigned short leap_gen_half(float f) {
      const unsigned int x = LEAP_FBITS(f);
      const unsigned int sign = (x >> 16) & 0x8000u, mag = x & 0x7FFFFFFFu;
      if (mag >= 0x7F800000u) return static_cast<unsigned short>(sign | 0x7C00u | (mag > 0x7F800000u ? 0x200u : 0u));
      if (mag >= 0x477FF000u) return static_cast<unsigned short>(sign | 0x7C00u);
      if (mag < 0x38800000u) {
        if (mag < 0x33000000u) return static_cast<unsigned short>(sign);
        const unsigned int mant = (mag & 0x7FFFFFu) | 0x800000u;
        const int shift = 126 - static_cast<int>(mag >> 23);
        unsigned int h = mant >> shift;
        const unsigned int rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1u) != 0u)) ++h;
        return static_cast<unsigned short>(sign | h);
      }
      unsigned int h = (mag - 0x38000000u) >> 13;
      const unsigned int rem = mag & 0x1FFFu;
      if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u)) ++h;
      return static_cast<unsigned short>(sign | h);
    } LEAP_HD unsigned short leap_gen_bfloat16(float f) {
      const unsigned int x = LEAP_FBITS(f);
      if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<unsigned short>((x >> 16) | 0x40u);
      return static_cast<unsigned short>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
    } LEAP_HD void leap_gen_store(void* out, int dtype, int kind, float a, float b, long long lo,
                                  unsigned long long span, unsigned long long seed, unsigned long long i) {
      float v = 0.0f;
      long long integer = 0;
      bool is_integer = true;
      if (kind == 1) {
        v = a;
        is_integer = false;
      } else if (kind == 2) {
        integer = static_cast<long long>(i);
      } else if (kind == 3) {
        integer = lo + static_cast<long long>(leap_gen_bits(seed, i) % span);
      } else if (kind == 4) {
        float s = leap_gen_unit(seed, 4 * i);
        s = LEAP_ADD(s, leap_gen_unit(seed, 4 * i + 1));
        s = LEAP_ADD(s, leap_gen_unit(seed, 4 * i + 2));
        s = LEAP_ADD(s, leap_gen_unit(seed, 4 * i + 3));
        v = LEAP_ADD(a, LEAP_MUL(b, LEAP_MUL(LEAP_ADD(s, -2.0f), 1.7320508f)));
        is_integer = false;
      } else if (kind == 5) {
        v = LEAP_ADD(a, LEAP_MUL(b, leap_gen_unit(seed, i)));
        is_integer = false;
      } else if (kind == 6) {  // rademacher: a - b or a + b
        v = LEAP_ADD(a, (leap_gen_bits(seed, i) & 1ULL) != 0ULL ? b : -b);
        is_integer = false;
      } else if (kind == 7) {  // heavy tails without a transcendental: a near-normal over 2u + 1/8
        float s = leap_gen_unit(seed, 5 * i);
        s = LEAP_ADD(s, leap_gen_unit(seed, 5 * i + 1));
        s = LEAP_ADD(s, leap_gen_unit(seed, 5 * i + 2));
        s = LEAP_ADD(s, leap_gen_unit(seed, 5 * i + 3));
        const float z = LEAP_MUL(LEAP_ADD(s, -2.0f), 1.7320508f);
        const float w = LEAP_ADD(LEAP_MUL(2.0f, leap_gen_unit(seed, 5 * i + 4)), 0.125f);
        v = LEAP_ADD(a, LEAP_MUL(b, LEAP_DIV(z, w)));
        is_integer = false;
      }
      if (is_integer && dtype != 3 && dtype != 4) v = static_cast<float>(integer);
      if (dtype == 0) static_cast<unsigned int*>(out)[i] = LEAP_FBITS(v);
      else if (dtype == 1) static_cast<unsigned short*>(out)[i] = leap_gen_half(v);
      else if (dtype == 2) static_cast<unsigned short*>(out)[i] = leap_gen_bfloat16(v);
      else if (dtype == 3) static_cast<int*>(out)[i] = is_integer ? static_cast<int>(integer) : static_cast<int>(v);
      else {  // int8, saturating as store_element does
        long long q = is_integer ? integer
                                 : (v != v        ? 0
                                    : v < -128.0f ? -128
                                    : v > 127.0f  ? 127
                                                  : static_cast<long long>(v));
        q = q < -128 ? -128 : q > 127 ? 127 : q;
        static_cast<signed char*>(out)[i] = static_cast<signed char>(q);
      }
    })

#undef LEAP_SHARED_GENERATOR
#undef LEAP_HD
#undef LEAP_FBITS
#undef LEAP_ADD
#undef LEAP_MUL
#undef LEAP_DIV

// A generator as the shared code takes it: kind 0 zeros, 1 constant(a), 2 arange, 3 randint(lo,
// lo + span - 1), 4 normal(mean a, std b), 5 uniform(a, a + b), 6 rademacher(a -+ b), 7 student_t's
// stand-in (a + b z / (2u + 1/8): tails to about 28 b; the correctness trials draw the true t).
struct GeneratorArgs {
  int dtype = 0;  // DType's value
  int kind = 0;
  float a = 0.0f, b = 0.0f;
  long long lo = 0;
  unsigned long long span = 1;
};
// `seed` is the draw's: a random_scale generator is scaled for it first (scaled_for_draw).
GeneratorArgs generator_args(DType dtype, const Generator& generator, std::uint64_t seed);
// The generator kernel's launch for n elements: blocks of 256 threads striding over the buffer, at
// most 65535 of them. The real driver and the tests' CPU-runtime device both launch it so.
constexpr unsigned k_generator_threads = 256;
constexpr unsigned generator_blocks(std::size_t n) noexcept {
  return static_cast<unsigned>(std::min<std::size_t>((n + k_generator_threads - 1) / k_generator_threads, 65535));
}

// The factor a random_scale generator's location and spread are multiplied by in the draw from
// `seed`: 2^k, k in -3..3 (a power of two, so the values keep their precision); 1 otherwise.
double draw_scale(const Generator& generator, std::uint64_t seed) noexcept;
// The generator the draw from `seed` uses: a and b times draw_scale(); the host's correctness draw
// and the device's timed draw both start here.
Generator scaled_for_draw(const Generator& generator, std::uint64_t seed) noexcept;

// The host twin of the device kernel (the CPU fake's generator).
void generate_inputs_on_host(DType dtype, const Generator& generator, std::uint64_t seed, void* out, std::size_t n);

// NVRTC source of the kernel `leap_generate_inputs(void* out, unsigned long long n, int dtype,
// int kind, float a, float b, long long lo, unsigned long long span, unsigned long long seed)`.
std::string input_generator_source();

// The harness's module compiled with NVRTC for compute capability major.minor: the generator and
// the output comparison (device_compare.hpp), as a cubin, or PTX for the driver to JIT when this
// NVRTC does not know the device. Returns an error text, empty on success.
std::string compile_input_generator(int major, int minor, std::string& image);

}  // namespace leap::sandbox::detail

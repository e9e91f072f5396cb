// SPDX-License-Identifier: Apache-2.0
// Every timed run's outputs against the reference's on the same inputs, compared on the device by a
// kernel of the harness's own (compiled with the input generator, see input_generator.hpp), so that
// checking every run costs a kernel launch and a 16-byte download, not a copy of every output. The
// rule is compare()'s (output_comparison.hpp): |a - e| <= atol + rtol * |e|, NaN matches only NaN, an infinity
// only the same infinity; `exact` compares the bits instead (a candidate's inputs after its run).
// The same code is compiled here for the host: the CPU fake of the driver compares with it, and a
// test holds it to compare() element for element. Internal.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "leap/sandbox/task.hpp"

namespace leap::sandbox::detail {

// Compiled twice, like the input generator: here with LEAP_CMP_HD = inline, and by NVRTC as the text
// of the macro argument with __device__ and IEEE operations that no contraction can change.
#define LEAP_SHARED_COMPARE(...) \
  __VA_ARGS__                    \
  inline constexpr const char k_output_compare_code[] = #__VA_ARGS__;
#define LEAP_CMP_HD inline
#define LEAP_CMP_FLOAT(bits) std::bit_cast<float>(bits)
#define LEAP_CMP_FABS(x) std::fabs(x)
#define LEAP_CMP_DADD(x, y) ((x) + (y))
#define LEAP_CMP_DMUL(x, y) ((x) * (y))
#define LEAP_CMP_INF std::numeric_limits<double>::infinity()

LEAP_SHARED_COMPARE(
    LEAP_CMP_HD float leap_cmp_half(unsigned short h) {
      const unsigned int sign = static_cast<unsigned int>(h & 0x8000u) << 16;
      const unsigned int exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
      if (exp == 0x1Fu) return LEAP_CMP_FLOAT(sign | 0x7F800000u | (mant << 13));
      if (exp == 0) {
        if (mant == 0) return LEAP_CMP_FLOAT(sign);
        int shift = 0;  // a subnormal half is a normal float: renormalise the mantissa
        unsigned int m = mant;
        while ((m & 0x400u) == 0) {
          m <<= 1;
          ++shift;
        }
        return LEAP_CMP_FLOAT(sign | (static_cast<unsigned int>(113 - shift) << 23) | ((m & 0x3FFu) << 13));
      }
      return LEAP_CMP_FLOAT(sign | ((exp + 112u) << 23) | (mant << 13));
    } LEAP_CMP_HD double leap_cmp_value(const void* data, int dtype, unsigned long long i) {
      if (dtype == 0) return static_cast<double>(LEAP_CMP_FLOAT(static_cast<const unsigned int*>(data)[i]));
      if (dtype == 1) return static_cast<double>(leap_cmp_half(static_cast<const unsigned short*>(data)[i]));
      if (dtype == 2)
        return static_cast<double>(
            LEAP_CMP_FLOAT(static_cast<unsigned int>(static_cast<const unsigned short*>(data)[i]) << 16));
      if (dtype == 4) return static_cast<double>(static_cast<const signed char*>(data)[i]);
      return static_cast<double>(static_cast<const int*>(data)[i]);
    } LEAP_CMP_HD int leap_cmp_differs(const void* actual, const void* expected, int dtype, int exact, double atol,
                                       double rtol, unsigned long long i) {
      if (exact != 0) {
        if (dtype == 1 || dtype == 2)
          return static_cast<const unsigned short*>(actual)[i] != static_cast<const unsigned short*>(expected)[i];
        if (dtype == 4)
          return static_cast<const unsigned char*>(actual)[i] != static_cast<const unsigned char*>(expected)[i];
        return static_cast<const unsigned int*>(actual)[i] != static_cast<const unsigned int*>(expected)[i];
      }
      const double a = leap_cmp_value(actual, dtype, i), e = leap_cmp_value(expected, dtype, i);
      const bool a_nan = a != a, e_nan = e != e;
      if (a_nan || e_nan) return a_nan != e_nan;
      const bool a_inf = a == LEAP_CMP_INF || a == -LEAP_CMP_INF, e_inf = e == LEAP_CMP_INF || e == -LEAP_CMP_INF;
      if (a_inf || e_inf) return a != e;
      return LEAP_CMP_FABS(LEAP_CMP_DADD(a, -e)) > LEAP_CMP_DADD(atol, LEAP_CMP_DMUL(rtol, LEAP_CMP_FABS(e)));
    })

#undef LEAP_SHARED_COMPARE
#undef LEAP_CMP_HD
#undef LEAP_CMP_FLOAT
#undef LEAP_CMP_FABS
#undef LEAP_CMP_DADD
#undef LEAP_CMP_DMUL
#undef LEAP_CMP_INF

// What one comparison adds up: the elements that differ, and the first of them. The device kernel
// writes it as two 64-bit words; a fresh record is {0, k_no_mismatch}.
struct CompareRecord {
  std::uint64_t mismatches = 0;
  std::uint64_t first_index = k_no_mismatch;
  static constexpr std::uint64_t k_no_mismatch = ~std::uint64_t{0};
};
static_assert(sizeof(CompareRecord) == 16, "the device kernel writes two 64-bit words");

// The host twin of the device kernel (the CPU fake's comparison): adds n elements' verdicts to `record`.
void compare_on_host(const void* actual, const void* expected, DType dtype, std::size_t n, Tolerance tol, bool exact,
                     CompareRecord& record);

// NVRTC source of `leap_compare_outputs(const void* actual, const void* expected, unsigned long long n,
// int dtype, int exact, double atol, double rtol, unsigned long long* record)`.
std::string output_compare_source();

// Its arguments, in its parameter order (device pointers as 64-bit values), and its launch for n
// elements: blocks of 256 threads striding over them, at most 1024. The real driver and the tests'
// CPU-runtime device both launch it so.
struct CompareArgs {
  std::uint64_t actual = 0, expected = 0;
  unsigned long long count = 0;
  int dtype = 0, exact = 0;
  double atol = 0.0, rtol = 0.0;
  std::uint64_t record = 0;
};
inline CompareArgs compare_args(std::uint64_t actual, std::uint64_t expected, DType dtype, std::size_t n, Tolerance tol,
                                bool exact, std::uint64_t record) noexcept {
  return {actual, expected, n, static_cast<int>(dtype), exact ? 1 : 0, tol.atol, tol.rtol, record};
}
constexpr unsigned k_compare_threads = 256;
constexpr unsigned compare_blocks(std::size_t n) noexcept {
  return static_cast<unsigned>(std::min<std::size_t>((n + k_compare_threads - 1) / k_compare_threads, 1024));
}

}  // namespace leap::sandbox::detail

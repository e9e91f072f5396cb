// SPDX-License-Identifier: Apache-2.0
// Numbers as the device computes them: __half and __nv_bfloat16 arithmetic and conversions, the float
// intrinsics in each rounding mode, the integer intrinsics, each against a hand-computed bit pattern;
// and the kernel headers' rounding core (leap_cpu/rounding.hpp, host code) against the host's own
// conversions and against the harness's independent half and bfloat16 code.
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cpu_runtime_support.hpp"
#include "evaluation/device_compare.hpp"
#include "evaluation/input_generator.hpp"
#include "kernel_include/leap_cpu/rounding.hpp"

namespace leap::cpu_runtime::test {
namespace {

namespace rt = leap_cpu::detail;

TEST_CASE("__half arithmetic rounds once to nearest even, conversions in every mode", "[cpu_runtime][numbers]") {
  const std::uint16_t a = 0x3C00, b = 0x1200;  // 1.0 and 1.5 * 2^-11
  std::vector<std::uint16_t> out(16, 0xDEAD);
  const std::uint16_t* pa = &a;
  const std::uint16_t* pb = &b;
  std::uint16_t* po = out.data();
  run_ok(kernel("leap_cpu_test_numbers", "half_ops"), {1}, {1}, 0, Schedule::in_order(), pa, pb, po);
  const std::vector<std::uint16_t> expected{
      0x3C01,  // 1 + 0.75 ulp: up
      0x1200,  // 1 * b
      0x3C01,  // fma
      0x3BFE,  // 1 - 1.5 * 2^-11: a tie below 1, to the even 1 - 2^-10
      0x7C00,  // 65520: a tie past 65504, to even: infinity
      0x7BFF,  // just under 65520: 65504
      0x0001,  // 2^-24
      0x0000,  // 2^-25: a tie, to even
      0x7FFF,  // NaN: the device's canonical NaN
      0x3C00,  // toward zero
      0x3C01,  // up
      0x3C00,  // max with a NaN: the other operand
      0x4080,  // 1.5^2 = 2.25
      0x4400,  // (-2)^2 = 4
      2,       // 2.5 to nearest even
      0,       // 1 < b is false
  };
  CHECK(out == expected);
}

TEST_CASE("__nv_bfloat16 arithmetic and conversions", "[cpu_runtime][numbers]") {
  const std::uint16_t a = 0x3F80, b = 0x3BC0;  // 1.0 and 1.5 * 2^-8
  std::vector<std::uint16_t> out(8, 0xDEAD);
  const std::uint16_t* pa = &a;
  const std::uint16_t* pb = &b;
  std::uint16_t* po = out.data();
  run_ok(kernel("leap_cpu_test_numbers", "bfloat16_ops"), {1}, {1}, 0, Schedule::in_order(), pa, pb, po);
  const std::vector<std::uint16_t> expected{0x3F81, 0x3BC0, 0x3F81, 0x3F80, 0x3F82, 0x7FFF, 1, 0xBF81};
  CHECK(out == expected);
}

TEST_CASE("float intrinsics in each rounding mode, conversions and integer intrinsics", "[cpu_runtime][numbers]") {
  const float in[2] = {1.5f, 3.0f};
  std::vector<std::uint32_t> out(20, 0xDEADBEEF);
  const float* pin = in;
  std::uint32_t* po = out.data();
  run_ok(kernel("leap_cpu_test_numbers", "intrinsics"), {1}, {1}, 0, Schedule::in_order(), pin, po);
  const std::vector<std::uint32_t> expected{
      0x40900000,  // 4.5
      0x3F800000,  // 1 + 1e-8 toward zero
      0x3F800001,  // 1 + 1e-8 up
      0x3EAAAAAA,  // 1/3 down
      0x3EAAAAAB,  // 1/3 up
      0x3FB504F3,  // sqrt(2)
      0xFFFFFFFE,  // -2.5 to nearest even: -2
      3,           // 3.99 toward zero
      0x7FFFFFFF,  // 1e20 clamps
      83108,       // popc 8 + 100 * clz 31 + 10000 * ffs 8
      0x80000000,  // brev(1)
      0x55114400,  // byte_perm selects bytes 0, 4, 1, 5
      3,           // (2^31 * 6) >> 32
      0xFFFFFFFE,  // 24-bit -1 times 2
      3,           // funnel shift of 0x1:80000000 left by 1, high word
      66,          // min(3, -4) + 10 * max(2u, 7u)
      0x3F800000,  // saturate(1.5)
      0x4B800000,  // 2^24 + 1 toward zero
      0x3F800001,  // 1 + 1e-12 up
      20,          // 1 + 2 + 3 + 4 + 10
  };
  CHECK(out == expected);
}

TEST_CASE("the rounding core: double to float as the host converts, in every mode", "[cpu_runtime][numbers]") {
  std::mt19937_64 gen(12345);
  std::vector<double> values{0.0,
                             -0.0,
                             1.0,
                             -1.0,
                             1e-40,
                             -1e-45,
                             1.4e-45,
                             3.4028235677973366e38,
                             3.5e38,
                             -3.5e38,
                             1e300,
                             1.0000000596046448,
                             1.0000001788139343};
  for (int i = 0; i < 20000; ++i) {
    values.push_back(std::bit_cast<double>(gen()));  // anything, wide exponents
    values.push_back(std::ldexp(static_cast<double>(gen() >> 11),
                                -53 - 120 - static_cast<int>(gen() % 40)));  // near float subnormals
    values.push_back(static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(gen()))) *
                     (1.0 + std::ldexp(1.0, -24)));  // near ties
  }
  const int modes[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
  const rt::Round ours[4] = {rt::Round::nearest, rt::Round::zero, rt::Round::down, rt::Round::up};
  for (int m = 0; m < 4; ++m) {
    for (double v : values) {
      if (std::isnan(v)) continue;
      std::fesetround(modes[m]);
      volatile double in = v;
      volatile float host = static_cast<float>(in);
      std::fesetround(FE_TONEAREST);
      const auto bits = static_cast<std::uint32_t>(rt::round_bits(v, 0, rt::k_float, ours[m]));
      if (bits != std::bit_cast<std::uint32_t>(static_cast<float>(host))) {
        FAIL("mode " << m << ": " << v << " rounds to " << std::bit_cast<float>(bits) << ", the host gives "
                     << static_cast<float>(host));
      }
    }
  }
}

TEST_CASE("the rounding core: float to half and bfloat16 as the harness's own generator rounds them",
          "[cpu_runtime][numbers]") {
  for (std::uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 4099) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    if (std::isnan(f)) continue;
    if (rt::round_bits(f, 0, rt::k_half, rt::Round::nearest) != sandbox::detail::leap_gen_half(f) ||
        rt::round_bits(f, 0, rt::k_bfloat16, rt::Round::nearest) != sandbox::detail::leap_gen_bfloat16(f))
      FAIL("float bits " << bits << " (" << f << ") round otherwise than the harness's generator");
  }
}

TEST_CASE("the rounding core: every half's value as the harness's comparison reads it", "[cpu_runtime][numbers]") {
  for (unsigned h = 0; h <= 0xFFFF; ++h) {
    const double ours = rt::value_of(h, rt::k_half);
    const float theirs = sandbox::detail::leap_cmp_half(static_cast<unsigned short>(h));
    const bool same = std::isnan(theirs) ? std::isnan(ours)
                                         : ours == static_cast<double>(theirs) &&
                                               rt::round_bits(ours, 0, rt::k_half, rt::Round::nearest) == h;
    if (!same) FAIL("half bits " << h << ": " << ours << ", the harness reads " << theirs);
  }
}

TEST_CASE("the rounding core: a residual breaks a tie the double could not see", "[cpu_runtime][numbers]") {
  // 1 + 2^-8 is a bfloat16 tie: to even (1.0) when exact, up when a little above, down when below.
  const double tie = 1.0 + std::ldexp(1.0, -8);
  CHECK(rt::round_bits(tie, 0, rt::k_bfloat16, rt::Round::nearest) == 0x3F80);
  CHECK(rt::round_bits(tie, 1, rt::k_bfloat16, rt::Round::nearest) == 0x3F81);
  CHECK(rt::round_bits(tie, -1, rt::k_bfloat16, rt::Round::nearest) == 0x3F80);
  // Exactly 1.0 with a negative residual: toward zero goes one step down, into the binade below.
  CHECK(rt::round_bits(1.0, -1, rt::k_half, rt::Round::zero) == 0x3BFF);
  CHECK(rt::round_bits(1.0, -1, rt::k_half, rt::Round::nearest) == 0x3C00);
  CHECK(rt::round_bits(1.0, 1, rt::k_half, rt::Round::up) == 0x3C01);
  // An fma whose exact value lies past a bfloat16 tie by less than a double can hold.
  const rt::Exact e = rt::exact_fma_narrow(1.0 + std::ldexp(1.0, -4), 1.0 + std::ldexp(1.0, -4), std::ldexp(1.0, -100));
  CHECK(e.residual == 1);
  CHECK(rt::round_bits(e, rt::k_bfloat16, rt::Round::nearest) == 0x3F91);  // 1.125 + 2^-8 + tiny: up
}

}  // namespace
}  // namespace leap::cpu_runtime::test

// SPDX-License-Identifier: Apache-2.0
// The host side of correctness checks: conversions, generators, poison, comparison and its summary.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <leap/sandbox/check.hpp>
#include <vector>

namespace sb = leap::sandbox;

TEST_CASE("check: half and bfloat16 conversions round to nearest even", "[sandbox][check]") {
  CHECK(sb::float_to_half(1.0f) == 0x3C00);
  CHECK(sb::float_to_half(-2.0f) == 0xC000);
  CHECK(sb::float_to_half(65504.0f) == 0x7BFF);
  CHECK(sb::float_to_half(1e6f) == 0x7C00);
  CHECK(sb::float_to_half(5.9604645e-8f) == 0x0001);  // smallest subnormal
  CHECK(sb::float_to_half(1.0f + 0x1.0p-11f) == 0x3C00);  // tie goes to even
  CHECK(std::isnan(sb::half_to_float(sb::float_to_half(NAN))));
  for (float f : {0.0f, 0.5f, -3.25f, 1000.0f, 0.000061035156f}) CHECK(sb::half_to_float(sb::float_to_half(f)) == f);
  CHECK(sb::float_to_bfloat16(1.0f) == 0x3F80);
  CHECK(sb::bfloat16_to_float(sb::float_to_bfloat16(-2.5f)) == -2.5f);
  CHECK(std::isnan(sb::bfloat16_to_float(sb::float_to_bfloat16(NAN))));
}

TEST_CASE("check: generators are deterministic per seed, in range, and differ across seeds", "[sandbox][check]") {
  std::vector<float> a(1000), b(1000), c(1000);
  const sb::Generator u{"uniform", -2.0, 3.0};
  sb::generate(sb::DType::float32, u, 7, a.data(), a.size());
  sb::generate(sb::DType::float32, u, 7, b.data(), b.size());
  sb::generate(sb::DType::float32, u, 8, c.data(), c.size());
  CHECK(a == b);
  CHECK(a != c);
  for (float v : a) CHECK((v >= -2.0f && v <= 3.0f));
  std::vector<std::int32_t> ints(1000);
  sb::generate(sb::DType::int32, sb::Generator{"randint", -3, 3}, 1, ints.data(), ints.size());
  for (std::int32_t v : ints) CHECK((v >= -3 && v <= 3));
  std::vector<float> n(10000);
  sb::generate(sb::DType::float32, sb::Generator{"normal", 5.0, 2.0}, 3, n.data(), n.size());
  double mean = 0;
  for (float v : n) mean += v;
  CHECK(mean / 10000 == Approx(5.0).margin(0.1));
  CHECK(sb::trial_seed(1, 0) != sb::trial_seed(1, 1));
  CHECK(sb::trial_seed(1, 0) != sb::trial_seed(2, 0));
}

TEST_CASE("check: poison is NaN for float types and seed-dependent for int32", "[sandbox][check]") {
  const std::uint32_t p32 = sb::poison_pattern(sb::DType::float32, 1);
  float f = 0;
  std::memcpy(&f, &p32, 4);
  CHECK(std::isnan(f));
  CHECK(std::isnan(sb::half_to_float(static_cast<std::uint16_t>(sb::poison_pattern(sb::DType::float16, 1)))));
  CHECK(std::isnan(sb::bfloat16_to_float(static_cast<std::uint16_t>(sb::poison_pattern(sb::DType::bfloat16, 1)))));
  CHECK(sb::poison_pattern(sb::DType::int32, 1) != sb::poison_pattern(sb::DType::int32, 2));
}

TEST_CASE("check: comparison within tolerance, NaN, first mismatch and summary", "[sandbox][check]") {
  std::vector<float> ref{1.0f, 2.0f, 3.0f, NAN, 5.0f};
  std::vector<float> same{1.0f, 2.00001f, 3.0f, NAN, 5.0f};
  const sb::Tolerance tol{1e-4, 1e-4};
  CHECK(sb::compare(sb::DType::float32, same.data(), ref.data(), 5, tol).ok);
  std::vector<float> bad{1.0f, 2.0f, 3.5f, 0.0f, NAN};
  const sb::Comparison c = sb::compare(sb::DType::float32, bad.data(), ref.data(), 5, tol);
  CHECK_FALSE(c.ok);
  CHECK(c.mismatches == 3);
  CHECK(c.first_index == 2);
  CHECK(c.first_expected == 3.0);
  CHECK(c.first_actual == 3.5);
  CHECK(c.nan_count == 1);
  CHECK(c.max_abs_error == Approx(0.5));
  const std::string text = sb::describe(c, "out", 5);
  CHECK_THAT(text, Catch::Contains("out: 3 of 5 elements differ") && Catch::Contains("first at [2]: expected 3, got 3.5") &&
                       Catch::Contains("NaN"));
  std::vector<std::int32_t> ia{1, 2, 3}, ib{1, 2, 4};
  CHECK_FALSE(sb::compare(sb::DType::int32, ib.data(), ia.data(), 3, sb::Tolerance{}).ok);
  std::vector<float> inf_a{INFINITY}, inf_b{-INFINITY};
  CHECK(sb::compare(sb::DType::float32, inf_a.data(), inf_a.data(), 1, tol).ok);
  CHECK_FALSE(sb::compare(sb::DType::float32, inf_b.data(), inf_a.data(), 1, tol).ok);
}

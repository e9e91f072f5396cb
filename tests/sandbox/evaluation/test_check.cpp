// SPDX-License-Identifier: Apache-2.0
// The host side of correctness checks: conversions, generators, poison, comparison and its summary.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include "evaluation/correctness_inputs.hpp"
#include "evaluation/element_values.hpp"
#include "evaluation/input_generator.hpp"
#include "evaluation/output_comparison.hpp"
#include "evaluation/output_poison.hpp"
#include <limits>
#include <random>
#include <set>
#include <vector>
#include <algorithm>
#include <vector>

#include "evaluation/device_compare.hpp"

namespace sb = leap::sandbox;

TEST_CASE("check: half and bfloat16 conversions round to nearest even", "[sandbox][check]") {
  CHECK(sb::float_to_half(1.0f) == 0x3C00);
  CHECK(sb::float_to_half(-2.0f) == 0xC000);
  CHECK(sb::float_to_half(65504.0f) == 0x7BFF);
  CHECK(sb::float_to_half(1e6f) == 0x7C00);
  CHECK(sb::float_to_half(5.9604645e-8f) == 0x0001);      // smallest subnormal
  CHECK(sb::float_to_half(1.0f + 0x1.0p-11f) == 0x3C00);  // tie goes to even
  CHECK(std::isnan(sb::half_to_float(sb::float_to_half(NAN))));
  for (float f : {0.0f, 0.5f, -3.25f, 1000.0f, 0.000061035156f}) CHECK(sb::half_to_float(sb::float_to_half(f)) == f);
  CHECK(sb::float_to_bfloat16(1.0f) == 0x3F80);
  CHECK(sb::bfloat16_to_float(sb::float_to_bfloat16(-2.5f)) == -2.5f);
  CHECK(std::isnan(sb::bfloat16_to_float(sb::float_to_bfloat16(NAN))));
}

TEST_CASE("check: generators are deterministic per seed, in range, and differ across seeds", "[sandbox][check]") {
  std::vector<float> a(1000), b(1000), c(1000);
  const sb::Generator u{sb::GeneratorKind::uniform, -2.0, 3.0};
  sb::generate(sb::DType::float32, u, 7, a.data(), a.size());
  sb::generate(sb::DType::float32, u, 7, b.data(), b.size());
  sb::generate(sb::DType::float32, u, 8, c.data(), c.size());
  CHECK(a == b);
  CHECK(a != c);
  for (float v : a) CHECK((v >= -2.0f && v <= 3.0f));
  std::vector<std::int32_t> ints(1000);
  sb::generate(sb::DType::int32, sb::Generator{sb::GeneratorKind::randint, -3, 3}, 1, ints.data(), ints.size());
  for (std::int32_t v : ints) CHECK((v >= -3 && v <= 3));
  std::vector<float> n(10000);
  sb::generate(sb::DType::float32, sb::Generator{sb::GeneratorKind::normal, 5.0, 2.0}, 3, n.data(), n.size());
  double mean = 0;
  for (float v : n) mean += v;
  CHECK(mean / 10000 == Approx(5.0).margin(0.1));
  CHECK(sb::trial_seed(1, 0) != sb::trial_seed(1, 1));
  CHECK(sb::trial_seed(1, 0) != sb::trial_seed(2, 0));
}

TEST_CASE("check: rademacher, student_t and random_scale draw what their names say", "[sandbox][check]") {
  const std::size_t n = 200000;
  std::vector<float> r(n);
  sb::generate(sb::DType::float32, sb::Generator{sb::GeneratorKind::rademacher, 0.5, 2.0}, 11, r.data(), n);
  std::size_t high = 0;
  for (float v : r) {
    CHECK((v == -1.5f || v == 2.5f));
    high += v == 2.5f ? 1 : 0;
  }
  CHECK(static_cast<double>(high) / n == Approx(0.5).margin(0.01));

  // Student's t with 3 degrees of freedom: centred, and far heavier-tailed than a normal of the same
  // scale (P(|t| > 5) is about 1.5 %; a normal's is under 1e-6).
  std::vector<float> t(n), z(n);
  sb::generate(sb::DType::float32, sb::Generator{sb::GeneratorKind::student_t, 1.0, 1.0}, 12, t.data(), n);
  sb::generate(sb::DType::float32, sb::Generator{sb::GeneratorKind::normal, 1.0, 1.0}, 12, z.data(), n);
  auto beyond = [](const std::vector<float>& v, double x) {
    std::size_t k = 0;
    for (float e : v) k += std::abs(e - 1.0) > x ? 1 : 0;
    return static_cast<double>(k) / static_cast<double>(v.size());
  };
  CHECK(beyond(t, 5.0) == Approx(0.0154).margin(0.003));
  CHECK(beyond(z, 5.0) < 1e-5);
  std::vector<float> sorted = t;
  std::nth_element(sorted.begin(), sorted.begin() + n / 2, sorted.end());
  CHECK(sorted[n / 2] == Approx(1.0).margin(0.02));

  // random_scale: each draw's location and spread are multiplied by 2^k, k in -3..3, chosen by the seed.
  sb::Generator scaled{sb::GeneratorKind::normal, 4.0, 1.0};
  scaled.random_scale = true;
  std::set<double> factors;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    std::vector<float> v(4000);
    sb::generate(sb::DType::float32, scaled, seed, v.data(), v.size());
    double mean = 0;
    for (float e : v) mean += e;
    mean /= static_cast<double>(v.size());
    const double factor = sb::detail::draw_scale(scaled, seed);
    factors.insert(factor);
    CHECK(mean == Approx(4.0 * factor).epsilon(0.05));
  }
  CHECK(factors == std::set<double>{0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0});
  sb::Generator plain{sb::GeneratorKind::normal, 4.0, 1.0};
  CHECK(sb::detail::draw_scale(plain, 5) == 1.0);
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
  CHECK_THAT(text, Catch::Contains("out: 3 of 5 elements differ") &&
                       Catch::Contains("first at [2]: expected 3, got 3.5") && Catch::Contains("NaN"));
  std::vector<std::int32_t> ia{1, 2, 3}, ib{1, 2, 4};
  CHECK_FALSE(sb::compare(sb::DType::int32, ib.data(), ia.data(), 3, sb::Tolerance{}).ok);
  std::vector<float> inf_a{INFINITY}, inf_b{-INFINITY};
  CHECK(sb::compare(sb::DType::float32, inf_a.data(), inf_a.data(), 1, tol).ok);
  CHECK_FALSE(sb::compare(sb::DType::float32, inf_b.data(), inf_a.data(), 1, tol).ok);
}

// An infinity where the reference has a finite value is an infinite error: the summary used to say
// "max abs err 0" (its maxima skipped every pair with an infinity), which tells a policy nothing.
TEST_CASE("check: an infinite mismatch is summarised as infinite, never as max abs err 0", "[sandbox][check]") {
  const sb::Tolerance tol{1e-4, 1e-4};
  const std::vector<float> ref{1.0f, 2.0f, INFINITY, 4.0f};
  const std::vector<float> got{INFINITY, 2.0f, -INFINITY, 4.0f};
  const sb::Comparison c = sb::compare(sb::DType::float32, got.data(), ref.data(), 4, tol);
  CHECK_FALSE(c.ok);
  CHECK(c.mismatches == 2);
  CHECK(c.inf_count == 2);
  CHECK(std::isinf(c.max_abs_error));
  CHECK(std::isinf(c.max_rel_error));
  const std::string text = sb::describe(c, "out", 4);
  CHECK_THAT(text, Catch::Contains("out: 2 of 4 elements differ (max abs err inf, max rel err inf)") &&
                       Catch::Contains("2 infinite where the other side is not the same infinity") &&
                       Catch::Contains("first at [0]: expected 1, got inf") && !Catch::Contains("max abs err 0"));
  // Matching infinities are no error at all; the finite pairs still give their own maximum.
  const std::vector<float> same_inf{1.5f, 2.0f, INFINITY, 4.0f};
  const sb::Comparison m = sb::compare(sb::DType::float32, same_inf.data(), ref.data(), 4, tol);
  CHECK(m.inf_count == 0);
  CHECK(m.max_abs_error == Approx(0.5));
}

TEST_CASE("check: special values land in every float dtype, at least one of each kind", "[sandbox][check]") {
  std::vector<float> f(1000, 1.0f);
  sb::sprinkle_special_values(sb::DType::float32, 5, f.data(), f.size());
  int nan = 0, pinf = 0, ninf = 0, negzero = 0, subnormal = 0;
  for (float v : f) {
    nan += std::isnan(v);
    pinf += v == std::numeric_limits<float>::infinity();
    ninf += v == -std::numeric_limits<float>::infinity();
    negzero += v == 0.0f && std::signbit(v);
    subnormal += std::fpclassify(v) == FP_SUBNORMAL;
  }
  CHECK(nan >= 1);
  CHECK(pinf >= 1);
  CHECK(ninf >= 1);
  CHECK(negzero >= 1);
  CHECK(subnormal >= 2);
  std::vector<float> again(1000, 1.0f);
  sb::sprinkle_special_values(sb::DType::float32, 5, again.data(), again.size());
  CHECK(std::memcmp(f.data(), again.data(), f.size() * 4) == 0);  // reproducible from the seed
  for (sb::DType d : {sb::DType::float16, sb::DType::bfloat16}) {
    std::vector<std::uint16_t> h(6, 0x3C00);
    sb::sprinkle_special_values(d, 9, h.data(), h.size());
    int specials = 0;
    for (std::uint16_t v : h) {
      const float x = d == sb::DType::float16 ? sb::half_to_float(v) : sb::bfloat16_to_float(v);
      specials +=
          std::isnan(x) || std::isinf(x) || (x == 0.0f && std::signbit(x)) || std::fpclassify(x) == FP_SUBNORMAL;
    }
    CHECK(specials >= 1);
  }
  std::vector<std::int32_t> ints(100, 7);
  sb::sprinkle_special_values(sb::DType::int32, 1, ints.data(), ints.size());
  CHECK(ints == std::vector<std::int32_t>(100, 7));
}

// The device comparison (device_compare.hpp) must say exactly what compare() says, element for
// element, or a timed run would be judged by another rule than the trials.
TEST_CASE("check: the device comparison's rule is compare()'s, element for element", "[sandbox][check]") {
  std::mt19937_64 rng(11);
  const sb::Tolerance tols[] = {{0.0, 0.0}, {1e-4, 1e-4}, {1e-2, 0.0}, {0.0, 5e-2}};
  for (sb::DType d : {sb::DType::float32, sb::DType::float16, sb::DType::bfloat16, sb::DType::int32}) {
    const std::size_t n = 4096, width = sb::dtype_size(d);
    for (const sb::Tolerance& tol : tols) {
      std::vector<unsigned char> a(n * width), e(n * width);
      sb::generate(d, sb::Generator{sb::GeneratorKind::uniform, -4.0, 4.0}, rng(), e.data(), n);
      a = e;
      // Perturb some elements by amounts around the tolerance, and make some bits random.
      for (std::size_t i = 0; i < n; i += 1 + rng() % 7) {
        if (rng() % 3 == 0) {
          for (std::size_t b = 0; b < width; ++b) a[i * width + b] = static_cast<unsigned char>(rng());
        } else {
          for (std::size_t b = 0; b < width; ++b)
            a[i * width + b] ^= static_cast<unsigned char>(rng() % 2 << (rng() % 8));
        }
      }
      if (d != sb::DType::int32) {
        sb::sprinkle_special_values(d, rng(), e.data(), n);
        sb::sprinkle_special_values(d, rng(), a.data(), n);
      }
      const sb::Comparison host = sb::compare(d, a.data(), e.data(), n, tol);
      leap::sandbox::detail::CompareRecord rec;
      leap::sandbox::detail::compare_on_host(a.data(), e.data(), d, n, tol, false, rec);
      INFO(sb::to_string(d) << " atol " << tol.atol << " rtol " << tol.rtol);
      REQUIRE(host.mismatches > 0);
      CHECK(rec.mismatches == host.mismatches);
      CHECK(rec.first_index == host.first_index);
      leap::sandbox::detail::CompareRecord exact;
      leap::sandbox::detail::compare_on_host(e.data(), e.data(), d, n, tol, true, exact);
      CHECK(exact.mismatches == 0);
      CHECK(exact.first_index == leap::sandbox::detail::CompareRecord::k_no_mismatch);
    }
  }
  // Every half: the device's conversion (renormalised subnormals) equals the host's.
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float host = sb::half_to_float(static_cast<std::uint16_t>(h));
    const float dev = leap::sandbox::detail::leap_cmp_half(static_cast<std::uint16_t>(h));
    if (std::isnan(host)) CHECK(std::isnan(dev));
    else if (host != dev || std::signbit(host) != std::signbit(dev))
      FAIL("half " << h << ": " << host << " vs " << dev);
  }
  // exact compares bits: -0 against +0 and one NaN payload against another differ.
  const float pz = 0.0f, nz = -0.0f;
  leap::sandbox::detail::CompareRecord zeros;
  leap::sandbox::detail::compare_on_host(&nz, &pz, sb::DType::float32, 1, {}, true, zeros);
  CHECK(zeros.mismatches == 1);
}

TEST_CASE("check: int8 is one byte, stored saturating, drawn in range, poisoned and compared like an integer",
          "[sandbox][check]") {
  CHECK(sb::dtype_size(sb::DType::int8) == 1);
  CHECK(sb::to_string(sb::DType::int8) == "int8");
  std::int8_t b[6] = {};
  const double values[6] = {-1000.0, -128.0, -3.7, 3.7, 127.0, 1e9};
  for (std::size_t i = 0; i < 6; ++i) sb::store_element(sb::DType::int8, b, i, values[i]);
  CHECK(std::vector<int>(b, b + 6) == std::vector<int>{-128, -128, -3, 3, 127, 127});
  CHECK(sb::element_value(sb::DType::int8, b, 0) == -128.0);
  // randint over the whole range, and the device twin's saturation for a draw outside it.
  std::vector<std::int8_t> q(20000);
  sb::generate(sb::DType::int8, sb::Generator{sb::GeneratorKind::randint, -127, 127}, 3, q.data(), q.size());
  CHECK(*std::min_element(q.begin(), q.end()) == -127);
  CHECK(*std::max_element(q.begin(), q.end()) == 127);
  std::vector<std::int8_t> wide(2000);
  sb::detail::generate_inputs_on_host(sb::DType::int8, sb::Generator{sb::GeneratorKind::randint, -1000, 1000}, 4,
                                      wide.data(), wide.size());
  CHECK(std::count(wide.begin(), wide.end(), std::int8_t{127}) > 100);  // saturated, not wrapped
  CHECK(std::count(wide.begin(), wide.end(), std::int8_t{-128}) > 100);
  // The poison is one seed-dependent byte.
  CHECK(sb::poison_pattern(sb::DType::int8, 1) <= 0xFFu);
  CHECK(sb::poison_pattern(sb::DType::int8, 1) != sb::poison_pattern(sb::DType::int8, 2));
  // Integers compare exactly unless the task allows more (quantize_int8 allows a rounding step).
  const std::int8_t expected[3] = {1, -5, 100}, off_by_one[3] = {1, -4, 100};
  CHECK_FALSE(sb::compare(sb::DType::int8, off_by_one, expected, 3, {0.0, 0.0}).ok);
  CHECK(sb::compare(sb::DType::int8, off_by_one, expected, 3, {1.0, 0.0}).ok);
}

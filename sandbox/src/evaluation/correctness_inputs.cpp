// SPDX-License-Identifier: Apache-2.0
#include "evaluation/correctness_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "evaluation/element_values.hpp"
#include "evaluation/input_generator.hpp"
#include "evaluation/seed_streams.hpp"

namespace leap::sandbox {

void generate(DType dtype, const Generator& unscaled, std::uint64_t seed, void* out, std::size_t n) {
  const Generator g = detail::scaled_for_draw(unscaled, seed);
  detail::Rng rng(seed);
  auto standard_normal = [&rng] {  // Box-Muller, one value per call
    const double u1 = 1.0 - rng.unit(), u2 = rng.unit();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  };
  if (g.kind == GeneratorKind::zeros || g.kind == GeneratorKind::constant) {
    const double v = g.kind == GeneratorKind::zeros ? 0.0 : g.a;
    for (std::size_t i = 0; i < n; ++i) store_element(dtype, out, i, v);
  } else if (g.kind == GeneratorKind::arange) {
    for (std::size_t i = 0; i < n; ++i) store_element(dtype, out, i, static_cast<double>(i));
  } else if (g.kind == GeneratorKind::randint) {
    const auto lo = static_cast<std::int64_t>(std::ceil(g.a)), hi = static_cast<std::int64_t>(std::floor(g.b));
    const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
    for (std::size_t i = 0; i < n; ++i)
      store_element(dtype, out, i, static_cast<double>(lo + static_cast<std::int64_t>(rng.next() % span)));
  } else if (g.kind == GeneratorKind::normal) {
    for (std::size_t i = 0; i < n; i += 2) {  // Box-Muller, two at a time
      const double u1 = 1.0 - rng.unit(), u2 = rng.unit();
      const double r = std::sqrt(-2.0 * std::log(u1)), t = 2.0 * 3.14159265358979323846 * u2;
      store_element(dtype, out, i, g.a + g.b * r * std::cos(t));
      if (i + 1 < n) store_element(dtype, out, i + 1, g.a + g.b * r * std::sin(t));
    }
  } else if (g.kind == GeneratorKind::rademacher) {
    for (std::size_t i = 0; i < n; ++i) store_element(dtype, out, i, g.a + ((rng.next() & 1) != 0 ? g.b : -g.b));
  } else if (g.kind == GeneratorKind::student_t) {  // t with 3 degrees of freedom: z / sqrt(chi2_3 / 3)
    for (std::size_t i = 0; i < n; ++i) {
      const double z = standard_normal();
      double chi2 = 0.0;
      for (int k = 0; k < 3; ++k) {
        const double y = standard_normal();
        chi2 += y * y;
      }
      store_element(dtype, out, i, g.a + g.b * z / std::sqrt(std::max(chi2, 1e-300) / 3.0));
    }
  } else {  // uniform
    for (std::size_t i = 0; i < n; ++i) store_element(dtype, out, i, g.a + (g.b - g.a) * rng.unit());
  }
}

void draw_input(const Param& buffer, const Sizes& sizes, std::uint64_t seed, void* out, std::size_t n) {
  generate(buffer.dtype, generator_at(buffer, sizes), seed, out, n);
  if (buffer.generator.special) sprinkle_special_values(buffer.dtype, seed, out, n);
}

void sprinkle_special_values(DType dtype, std::uint64_t seed, void* out, std::size_t n) {
  if (dtype == DType::int32 || dtype == DType::int8 || n == 0) return;
  // The subnormals of each float type, as float32 values that convert to them exactly.
  const float smallest_subnormal = dtype == DType::float32 ? 0x1p-149f : dtype == DType::float16 ? 0x1p-24f : 0x1p-133f;
  const float largest_subnormal = dtype == DType::float32   ? 0x1.fffffcp-127f
                                  : dtype == DType::float16 ? 0x1.ff8p-15f
                                                            : 0x1.fcp-127f;
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity(),
                             -0.0,
                             smallest_subnormal,
                             largest_subnormal};
  constexpr std::size_t k_kinds = sizeof specials / sizeof specials[0];
  // One element in 64 on average, and each kind at least once while there is room.
  const std::size_t count = std::min(n, std::max(k_kinds, n / 64));
  detail::Rng rng(seed ^ detail::k_special_places_stream);
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t at = static_cast<std::size_t>(rng.next() % n);
    const double v = specials[k % k_kinds];
    if (dtype == DType::float32) static_cast<float*>(out)[at] = static_cast<float>(v);
    else store_element(dtype, out, at, v);
  }
}

std::uint64_t trial_seed(std::uint64_t base, std::uint64_t trial) noexcept {
  std::uint64_t s = base + 0x632BE59BD9B4E019ULL * (trial + 1);
  return detail::splitmix(s);
}

}  // namespace leap::sandbox

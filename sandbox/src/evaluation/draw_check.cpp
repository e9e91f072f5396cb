// SPDX-License-Identifier: Apache-2.0
#include "evaluation/draw_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "evaluation/input_generator.hpp"

namespace leap::sandbox::detail {
namespace {

bool random_kind(GeneratorKind k) {
  // Not rademacher: two values, so only about half its elements change with the seed.
  return k == GeneratorKind::uniform || k == GeneratorKind::normal || k == GeneratorKind::randint ||
         k == GeneratorKind::student_t;
}

std::string case_text(const DrawCheckCase& c) {
  return std::string(to_string(c.dtype)) + " " + std::string(to_string(c.generator.kind)) + "(" +
         std::to_string(c.generator.a) + ", " + std::to_string(c.generator.b) + "), seed " + std::to_string(c.seed) +
         ", " + std::to_string(c.n) + " elements";
}

// Elements of two draws of one element size that differ.
std::size_t differing(const std::vector<unsigned char>& x, const std::vector<unsigned char>& y, std::size_t size) {
  std::size_t n = 0;
  for (std::size_t i = 0; i + size <= x.size(); i += size) n += std::memcmp(&x[i], &y[i], size) != 0 ? 1 : 0;
  return n;
}

}  // namespace

std::vector<DrawCheckCase> draw_check_sample() {
  const std::vector<Generator> generators{
      {GeneratorKind::uniform, -1.0, 1.0, false},     {GeneratorKind::uniform, -1e30, 1e30, false},
      {GeneratorKind::uniform, -1e-6, 1e-6, false},   {GeneratorKind::normal, 0.5, 2.0, false},
      {GeneratorKind::randint, -100.0, 100.0, false}, {GeneratorKind::zeros, 0.0, 0.0, false},
      {GeneratorKind::constant, 1.75, 0.0, false},    {GeneratorKind::arange, 0.0, 0.0, false},
      {GeneratorKind::rademacher, 0.5, 2.0, false},   {GeneratorKind::student_t, 0.0, 1.5, false},
      {GeneratorKind::normal, 1.0, 3.0, false, true}};  // random_scale: the scale is the host's choice
  std::vector<DrawCheckCase> out;
  for (DType dtype : {DType::float32, DType::float16, DType::bfloat16, DType::int32, DType::int8}) {
    for (const Generator& g : generators) {
      for (std::uint64_t seed : {std::uint64_t{0x1EA9}, std::uint64_t{0xDEADBEEFCAFEull}}) {
        out.push_back({dtype, g, seed, 4099});  // not a multiple of the generator's 256-thread blocks
      }
    }
  }
  return out;
}

DrawCheck check_device_draw(GpuDriver& driver) {
  DrawCheck check;
  const std::vector<DrawCheckCase> sample = draw_check_sample();
  std::size_t most = 0;
  for (const DrawCheckCase& c : sample) most = std::max(most, c.n * dtype_size(c.dtype));
  DevicePtr buffer = 0;
  if (DeviceStatus rc = driver.allocate(most, buffer); rc != k_device_ok) {
    check.error = "allocating " + std::to_string(most) + " bytes for the draw check: " + driver.error_name(rc);
    return check;
  }
  std::vector<unsigned char> device, host, previous;
  const DrawCheckCase* previous_case = nullptr;
  for (const DrawCheckCase& c : sample) {
    const std::size_t bytes = c.n * dtype_size(c.dtype);
    device.assign(bytes, 0);
    host.assign(bytes, 0);
    // A pattern first, so an element the device never wrote differs too.
    DeviceStatus rc = driver.fill8(buffer, 0xA5, bytes);
    if (rc == k_device_ok) rc = driver.generate_inputs(buffer, c.dtype, c.generator, c.seed, c.n);
    if (rc == k_device_ok) rc = driver.synchronize();
    if (rc == k_device_ok) rc = driver.download(device.data(), buffer, bytes);
    if (rc != k_device_ok) {
      check.error = "drawing " + case_text(c) + " on the device: " + driver.error_name(rc);
      break;
    }
    generate_inputs_on_host(c.dtype, c.generator, c.seed, host.data(), c.n);
    if (const std::size_t bad = differing(device, host, dtype_size(c.dtype)); bad > 0) {
      std::size_t first = 0;
      while (std::memcmp(&device[first * dtype_size(c.dtype)], &host[first * dtype_size(c.dtype)],
                         dtype_size(c.dtype)) == 0)
        ++first;
      check.error = "the device's draw of " + case_text(c) + " differs from the host's in " + std::to_string(bad) +
                    " elements, first at [" + std::to_string(first) + "]";
      break;
    }
    // The same case under the other seed: a random draw within the dtype's range (not one that
    // saturates to infinities, nor floats truncated to a few integers) must change in most elements.
    const bool in_range =
        std::abs(c.generator.a) + std::abs(c.generator.b) < 6.0e4 &&
        ((c.dtype != DType::int32 && c.dtype != DType::int8) || c.generator.kind == GeneratorKind::randint);
    if (previous_case != nullptr && random_kind(c.generator.kind) && in_range && previous_case->dtype == c.dtype &&
        previous_case->generator.kind == c.generator.kind && previous_case->generator.a == c.generator.a &&
        previous_case->generator.b == c.generator.b && previous_case->n == c.n) {
      const std::size_t changed = differing(device, previous, dtype_size(c.dtype));
      if (changed * 2 < c.n) {
        check.error = "the device's draw of " + case_text(c) + " is degenerate: only " + std::to_string(changed) +
                      " of " + std::to_string(c.n) + " elements change with the seed";
        break;
      }
    }
    previous = device;
    previous_case = &c;
    ++check.cases;
    check.elements += c.n;
  }
  if (DeviceStatus rc = driver.release(buffer); rc != k_device_ok && check.error.empty())
    check.error = "freeing the draw check's buffer: " + driver.error_name(rc);
  check.ok = check.error.empty();
  return check;
}

std::string draw_check_refusal(const DrawCheck& check) {
  if (check.ok) return "";
  return "the device's input generator failed its check against the host twin, so no timed run's fresh inputs "
         "can be trusted and this runner evaluates nothing: " +
         check.error;
}

}  // namespace leap::sandbox::detail

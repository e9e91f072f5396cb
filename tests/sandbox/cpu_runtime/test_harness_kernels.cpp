// SPDX-License-Identifier: Apache-2.0
// The harness's own CUDA (the input generator, the output comparison, the L2 read) compiled from the
// very text the GPU runner gives NVRTC, run on the CPU runtime, and held bit for bit to its host twins
// (generate_inputs_on_host, compare_on_host) under every schedule and on several workers.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <vector>

#include "cpu_runtime_support.hpp"
#include "evaluation/device_compare.hpp"
#include "evaluation/draw_check.hpp"
#include "evaluation/input_generator.hpp"
#include "evaluation/l2_flush.hpp"
#include "leap/cpu_runtime/compile.hpp"
#include "leap/sandbox/task.hpp"

namespace leap::cpu_runtime::test {
namespace {

namespace fs = std::filesystem;
using sandbox::DType;
using sandbox::Generator;
using sandbox::GeneratorKind;

// The harness's module as the GPU runner compiles it (one source: generator and comparison), and the L2 reader.
const Module& harness_module() {
  static const Module m = [] {
    const fs::path dir = fs::path(LEAP_CPU_TEST_MODULES) / "scratch" / "harness";
    fs::create_directories(dir);
    const std::string src = sandbox::detail::input_generator_source() + sandbox::detail::output_compare_source();
    const CompileResult c = compile_module_text(src, "leap_input_generator.cu", dir / "harness.so");
    if (!c.ok) FAIL("the harness's kernels do not compile for the CPU runtime:\n" << c.log);
    return Module::load(dir / "harness.so");
  }();
  return m;
}
const Module& l2_module() {
  static const Module m = [] {
    const fs::path dir = fs::path(LEAP_CPU_TEST_MODULES) / "scratch" / "harness";
    fs::create_directories(dir);
    const CompileResult c = compile_module_text(sandbox::detail::k_l2_reader_code, "leap_l2_reader.cu", dir / "l2.so");
    if (!c.ok) FAIL("the L2 reader does not compile for the CPU runtime:\n" << c.log);
    return Module::load(dir / "l2.so");
  }();
  return m;
}

std::vector<LaunchOptions> worker_counts() {
  LaunchOptions one, three;
  three.workers = 3;
  return {one, three};
}

TEST_CASE("the harness's input generator agrees bit for bit with its host twin", "[cpu_runtime][harness]") {
  const Kernel& k = harness_module().kernel("leap_generate_inputs");
  const std::vector<Generator> generators{
      {GeneratorKind::uniform, -4.0, 4.0, false},     {GeneratorKind::normal, 0.5, 2.0, false},
      {GeneratorKind::randint, -100.0, 100.0, false}, {GeneratorKind::zeros, 0.0, 0.0, false},
      {GeneratorKind::constant, 1.75, 0.0, false},    {GeneratorKind::arange, 0.0, 0.0, false},
      {GeneratorKind::uniform, -1e30, 1e30, false},   {GeneratorKind::uniform, -1e-6, 1e-6, false},
      {GeneratorKind::rademacher, 0.5, 2.0, false},   {GeneratorKind::student_t, 0.0, 1.5, false},
      {GeneratorKind::normal, 1.0, 3.0, false, true}};
  const unsigned long long n = 5003;
  for (DType dtype : {DType::float32, DType::float16, DType::bfloat16, DType::int32, DType::int8}) {
    for (const Generator& g : generators) {
      for (const std::uint64_t seed : {std::uint64_t{1}, std::uint64_t{0xDEADBEEFCAFEull}}) {
        const std::size_t bytes = n * sandbox::dtype_size(dtype);
        std::vector<unsigned char> host(bytes), device(bytes, 0xAB);
        sandbox::detail::generate_inputs_on_host(dtype, g, seed, host.data(), n);
        const sandbox::detail::GeneratorArgs a = sandbox::detail::generator_args(dtype, g, seed);
        void* out = device.data();
        // The GPU runner's launch (min(ceil(n / 256), 65535) blocks of 256) and a grid-stride one.
        for (const unsigned blocks : {static_cast<unsigned>((n + 255) / 256), 3u}) {
          std::fill(device.begin(), device.end(), 0xAB);
          const Schedule s = blocks == 3 ? Schedule::random(seed) : Schedule::reversed();
          run_ok(k, {blocks}, {256}, 0, s, out, n, a.dtype, a.kind, a.a, a.b, a.lo, a.span,
                 static_cast<unsigned long long>(seed));
          INFO("dtype " << sandbox::to_string(dtype) << ", " << sandbox::to_string(g.kind) << ", seed " << seed);
          REQUIRE(std::memcmp(host.data(), device.data(), bytes) == 0);
        }
      }
    }
  }
}

// The very sample the GPU runner's draw check draws on its device at start-up (draw_check.hpp), run
// here through the generator kernel as the runner launches it: were the kernel and its host twin to
// part, the runner would refuse every evaluation; this says so before any device does.
TEST_CASE("the GPU runner's draw check sample: the generator kernel agrees with the host twin on every case",
          "[cpu_runtime][harness][draw_check]") {
  const Kernel& k = harness_module().kernel("leap_generate_inputs");
  const std::vector<sandbox::detail::DrawCheckCase> sample = sandbox::detail::draw_check_sample();
  REQUIRE(sample.size() >= 5 * 8);  // every dtype, every generator kind
  for (const sandbox::detail::DrawCheckCase& c : sample) {
    const std::size_t bytes = c.n * sandbox::dtype_size(c.dtype);
    std::vector<unsigned char> host(bytes), device(bytes, 0xA5);
    sandbox::detail::generate_inputs_on_host(c.dtype, c.generator, c.seed, host.data(), c.n);
    const sandbox::detail::GeneratorArgs a = sandbox::detail::generator_args(c.dtype, c.generator, c.seed);
    void* out = device.data();
    const auto blocks = static_cast<unsigned>(std::min<std::size_t>((c.n + 255) / 256, 65535));
    run_ok(k, {blocks}, {256}, 0, Schedule::random(c.seed), out, static_cast<unsigned long long>(c.n), a.dtype, a.kind,
           a.a, a.b, a.lo, a.span, static_cast<unsigned long long>(c.seed));
    INFO("dtype " << sandbox::to_string(c.dtype) << ", " << sandbox::to_string(c.generator.kind) << ", seed "
                  << c.seed);
    REQUIRE(std::memcmp(host.data(), device.data(), bytes) == 0);
  }
}

// Outputs with planted differences of every kind the comparison knows.
template <class T>
std::vector<T> with_differences(const std::vector<T>& expected, std::mt19937& gen);

template <>
std::vector<float> with_differences(const std::vector<float>& e, std::mt19937& gen) {
  std::vector<float> a = e;
  std::uniform_int_distribution<std::size_t> at(0, e.size() - 1);
  for (int i = 0; i < 20; ++i) a[at(gen)] += 1e-3f;         // outside a tight tolerance
  for (int i = 0; i < 20; ++i) a[at(gen)] *= 1.0f + 1e-7f;  // inside it
  a[at(gen)] = std::numeric_limits<float>::quiet_NaN();
  a[at(gen)] = std::numeric_limits<float>::infinity();
  a[17] = -0.0f;
  return a;
}
template <>
std::vector<std::uint16_t> with_differences(const std::vector<std::uint16_t>& e, std::mt19937& gen) {
  std::vector<std::uint16_t> a = e;
  std::uniform_int_distribution<std::size_t> at(0, e.size() - 1);
  for (int i = 0; i < 30; ++i) a[at(gen)] ^= static_cast<std::uint16_t>(1u << (gen() % 16));
  a[at(gen)] = 0x7E00;  // NaN in both encodings' sense
  return a;
}
template <>
std::vector<std::int32_t> with_differences(const std::vector<std::int32_t>& e, std::mt19937& gen) {
  std::vector<std::int32_t> a = e;
  std::uniform_int_distribution<std::size_t> at(0, e.size() - 1);
  for (int i = 0; i < 25; ++i) a[at(gen)] += 1;
  return a;
}
template <>
std::vector<std::int8_t> with_differences(const std::vector<std::int8_t>& e, std::mt19937& gen) {
  std::vector<std::int8_t> a = e;  // values within +-100: a step of 1 or 3 stays in range
  std::uniform_int_distribution<std::size_t> at(0, e.size() - 1);
  for (int i = 0; i < 35; ++i) {
    const std::size_t k = at(gen);
    a[k] = static_cast<std::int8_t>(a[k] + (i < 25 ? 1 : -3));
  }
  return a;
}

template <class T>
void check_compare(DType dtype, const std::vector<T>& expected, sandbox::Tolerance tol) {
  const Kernel& k = harness_module().kernel("leap_compare_outputs");
  std::mt19937 gen(static_cast<unsigned>(expected.size()));
  const std::vector<T> actual = with_differences(expected, gen);
  const unsigned long long n = expected.size();
  for (const bool exact : {false, true}) {
    sandbox::detail::CompareRecord host;
    sandbox::detail::compare_on_host(actual.data(), expected.data(), dtype, n, tol, exact, host);
    REQUIRE(host.mismatches > 0);
    for (const LaunchOptions& options : worker_counts()) {
      for (const Schedule& s : all_schedules()) {
        unsigned long long record[2] = {0, sandbox::detail::CompareRecord::k_no_mismatch};
        const void* pa = actual.data();
        const void* pe = expected.data();
        unsigned long long* pr = record;
        const int dt = static_cast<int>(dtype), ex = exact ? 1 : 0;
        const unsigned blocks = static_cast<unsigned>(std::min<unsigned long long>((n + 255) / 256, 1024));
        const LaunchResult r = run(k, {blocks}, {256}, 0, s, options, pa, pe, n, dt, ex, tol.atol, tol.rtol, pr);
        INFO(sandbox::to_string(dtype) << (exact ? " exact" : "") << " under " << s.name() << " on " << options.workers
                                       << " workers: " << r.message);
        REQUIRE(r.ok());
        CHECK(record[0] == host.mismatches);
        CHECK(record[1] == host.first_index);
      }
    }
  }
}

TEST_CASE("the harness's output comparison agrees with its host twin on every dtype", "[cpu_runtime][harness]") {
  std::mt19937 gen(99);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> f(7001);
  for (float& v : f) v = normal(gen);
  f[5] = std::numeric_limits<float>::quiet_NaN();
  check_compare(DType::float32, f, {1e-5, 1e-5});
  std::vector<std::uint16_t> h(3001), bf(3001);
  for (std::size_t i = 0; i < h.size(); ++i) {
    h[i] = static_cast<std::uint16_t>(sandbox::detail::leap_gen_half(normal(gen)));
    bf[i] = static_cast<std::uint16_t>(sandbox::detail::leap_gen_bfloat16(normal(gen)));
  }
  check_compare(DType::float16, h, {1e-3, 1e-3});
  check_compare(DType::bfloat16, bf, {1e-2, 1e-2});
  std::vector<std::int32_t> ints(2500);
  for (std::size_t i = 0; i < ints.size(); ++i) ints[i] = static_cast<std::int32_t>(gen() % 2000) - 1000;
  check_compare(DType::int32, ints, {0.0, 0.0});
  std::vector<std::int8_t> bytes(3333);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<std::int8_t>(static_cast<int>(gen() % 201) - 100);
  check_compare(DType::int8, bytes, {0.0, 0.0});
  check_compare(DType::int8, bytes, {1.0, 0.0});  // off by one allowed: only the +1s of more than one remain
}

TEST_CASE("the harness's L2 read keeps every load and writes only when the value it reads equals `never`",
          "[cpu_runtime][harness]") {
  const Kernel& k = l2_module().kernel("leap_read_for_l2");
  // Element i holds bit i % 32 in its x: with 1024 threads over 1000 elements each thread reads one.
  std::vector<std::uint32_t> words(4 * 1000, 0);
  for (std::size_t i = 0; i < 1000; ++i) words[4 * i] = 1u << (i % 32);
  const void* buf = words.data();
  const unsigned long long n = 1000;
  for (const Schedule& s : all_schedules()) {
    unsigned sink = 0xABCDu;
    unsigned* ps = &sink;
    const unsigned never_matched = 0xFFFFFFFFu;
    run_ok(k, {2}, {512}, 0, s, buf, n, never_matched, ps);
    CHECK(sink == 0xABCDu);
    const unsigned bit5 = 1u << 5;
    run_ok(k, {2}, {512}, 0, s, buf, n, bit5, ps);
    CHECK(sink == bit5);
  }
}

}  // namespace
}  // namespace leap::cpu_runtime::test

// SPDX-License-Identifier: Apache-2.0
#include "evaluation/input_generator.hpp"

#include <nvrtc.h>

#include <cmath>
#include <string>

#include "evaluation/device_compare.hpp"

namespace leap::sandbox::detail {

double draw_scale(const Generator& g, std::uint64_t seed) noexcept {
  const bool scalable = g.kind == GeneratorKind::uniform || g.kind == GeneratorKind::normal ||
                        g.kind == GeneratorKind::rademacher || g.kind == GeneratorKind::student_t;
  if (!g.random_scale || !scalable) return 1.0;
  const int k = static_cast<int>(leap_gen_mix(seed ^ 0x5CA1E5CA1E5CA1E5ULL) % 7) - 3;
  return std::ldexp(1.0, k);
}

Generator scaled_for_draw(const Generator& generator, std::uint64_t seed) noexcept {
  Generator g = generator;
  const double scale = draw_scale(g, seed);
  g.a *= scale;
  g.b *= scale;
  return g;
}

GeneratorArgs generator_args(DType dtype, const Generator& unscaled, std::uint64_t seed) {
  const Generator g = scaled_for_draw(unscaled, seed);
  GeneratorArgs args;
  args.dtype = static_cast<int>(dtype);
  if (g.kind == GeneratorKind::zeros) {
    args.kind = 0;
  } else if (g.kind == GeneratorKind::constant) {
    args.kind = 1;
    args.a = static_cast<float>(g.a);
  } else if (g.kind == GeneratorKind::arange) {
    args.kind = 2;
  } else if (g.kind == GeneratorKind::randint) {
    args.kind = 3;
    args.lo = static_cast<long long>(std::ceil(g.a));
    const auto hi = static_cast<long long>(std::floor(g.b));
    args.span = hi >= args.lo ? static_cast<unsigned long long>(hi - args.lo) + 1 : 1;
  } else if (g.kind == GeneratorKind::normal) {
    args.kind = 4;
    args.a = static_cast<float>(g.a);
    args.b = static_cast<float>(g.b);
  } else if (g.kind == GeneratorKind::rademacher || g.kind == GeneratorKind::student_t) {
    args.kind = g.kind == GeneratorKind::rademacher ? 6 : 7;
    args.a = static_cast<float>(g.a);
    args.b = static_cast<float>(g.b);
  } else {
    args.kind = 5;
    args.a = static_cast<float>(g.a);
    args.b = static_cast<float>(g.b - g.a);
  }
  return args;
}

void generate_inputs_on_host(DType dtype, const Generator& generator, std::uint64_t seed, void* out, std::size_t n) {
  const GeneratorArgs g = generator_args(dtype, generator, seed);
  for (std::size_t i = 0; i < n; ++i) leap_gen_store(out, g.dtype, g.kind, g.a, g.b, g.lo, g.span, seed, i);
}

std::string input_generator_source() {
  return std::string(
             "#define LEAP_HD static __device__ __forceinline__\n"
             "#define LEAP_FBITS(x) __float_as_uint(x)\n"
             "#define LEAP_ADD(x, y) __fadd_rn((x), (y))\n"
             "#define LEAP_MUL(x, y) __fmul_rn((x), (y))\n"
             "#define LEAP_DIV(x, y) __fdiv_rn((x), (y))\n") +
         k_input_generator_code +
         "\nextern \"C\" __global__ void leap_generate_inputs(void* out, unsigned long long n, int dtype, int kind, "
         "float a,\n"
         "    float b, long long lo, unsigned long long span, unsigned long long seed) {\n"
         "  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
         "  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += "
         "stride)\n"
         "    leap_gen_store(out, dtype, kind, a, b, lo, span, seed, i);\n"
         "}\n";
}

std::string compile_input_generator(int major, int minor, std::string& image) {
  // One module for the harness's own kernels: the input generator and the output comparison.
  const std::string src = input_generator_source() + output_compare_source();
  const std::string cc = std::to_string(major) + std::to_string(minor);
  std::string log;
  for (const std::string& arch : {"sm_" + cc, "compute_" + cc}) {
    nvrtcProgram prog = nullptr;
    if (nvrtcCreateProgram(&prog, src.c_str(), "leap_input_generator.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
      return "nvrtcCreateProgram failed for the input generator";
    }
    struct Guard {
      nvrtcProgram* p;
      ~Guard() { nvrtcDestroyProgram(p); }
    } guard{&prog};
    const std::string flag = "--gpu-architecture=" + arch;
    const char* opts[] = {flag.c_str(), "--fmad=false"};  // no contraction: the host twin gives the same bits
    const nvrtcResult rc = nvrtcCompileProgram(prog, 2, opts);
    if (rc != NVRTC_SUCCESS) {
      std::size_t n = 0;
      if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1) {
        std::string l(n, '\0');
        if (nvrtcGetProgramLog(prog, l.data()) == NVRTC_SUCCESS)
          log += (log.empty() ? "" : "; ") + std::string(l.c_str());
      }
      continue;
    }
    const bool cubin = arch[0] == 's';
    std::size_t n = 0;
    if ((cubin ? nvrtcGetCUBINSize(prog, &n) : nvrtcGetPTXSize(prog, &n)) != NVRTC_SUCCESS || n == 0) continue;
    image.assign(n, '\0');
    if ((cubin ? nvrtcGetCUBIN(prog, image.data()) : nvrtcGetPTX(prog, image.data())) == NVRTC_SUCCESS) return {};
  }
  image.clear();
  return "NVRTC could not compile the harness's input generator for sm_" + cc + (log.empty() ? "" : ": " + log);
}

}  // namespace leap::sandbox::detail

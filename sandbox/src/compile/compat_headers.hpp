// SPDX-License-Identifier: Apache-2.0
// The NVRTC compatibility layer: small in-memory stand-ins for the C and C++ standard headers device
// code includes (which NVRTC lacks) and for the CUDA runtime headers (which device code never needs).
//
//   header(s)                          what it gives                                   maps onto
//   <stdint.h> <cstdint>               int8_t..uint64_t, intptr_t, INT64_MAX, ...      <cuda/std/cstdint> (C++17+)
//   <limits.h> <climits>               CHAR_BIT, INT_MAX, LLONG_MAX, ...               <cuda/std/climits> (C++17+)
//   <float.h> <cfloat>                 FLT_MAX, FLT_EPSILON, DBL_MAX, ...              own values (libcu++'s is empty
//   under NVRTC) <math.h> <cmath>                   INFINITY, NAN, HUGE_VALF, M_PI...; std::sqrt... NVRTC's built-in
//   math <stdio.h> <cstdio>                 device printf, std::printf                      NVRTC's built-in printf
//   <assert.h> <cassert>               assert honouring NDEBUG                         NVRTC's __assertfail
//   <stddef.h> <cstddef>               size_t, ptrdiff_t, nullptr_t, offsetof, byte    built-ins, <cuda/std/cstddef>
//   <stdlib.h> <cstdlib>               malloc, free, abs, labs, llabs                  NVRTC's built-ins
//   <string.h> <cstring>               memcpy, memset, memcmp, strlen                  built-ins plus two inline
//   helpers <limits> <type_traits> <utility>   std::numeric_limits, std::is_same, std::move... <cuda/std/...> (needs
//   C++17;
//                                                                                    type_traits and utility cost ~3 s
//                                                                                    a compile)
//   <cuda_runtime.h> <cuda_runtime_api.h> <device_launch_parameters.h> <cuda.h>
//                                      CUDART_VERSION / CUDA_VERSION, CUdeviceptr     nothing else: NVRTC has the
//                                      device part built in
//
// The compiler hands these to NVRTC as named headers, after the task's own (a shipped header of the
// same name wins), so a kernel written for nvcc compiles as written.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace leap::sandbox {

struct CompatHeader {
  std::string_view name;     // as written in #include <...>, e.g. "cstdint"
  std::string_view summary;  // one line: what it provides, for `info`
  std::string_view content;  // the header text NVRTC sees
};

// Every stand-in, in a fixed order.
std::span<const CompatHeader> compat_headers() noexcept;

// True when `name` is one of the stand-ins.
bool is_compat_header(std::string_view name) noexcept;

// A short identity of the layer's contents ("compat <hex digest>"); part of the compile cache key,
// so editing a stand-in never serves results compiled against the old text.
std::string compat_headers_tag();

}  // namespace leap::sandbox

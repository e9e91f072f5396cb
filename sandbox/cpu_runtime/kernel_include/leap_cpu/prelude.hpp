// SPDX-License-Identifier: Apache-2.0
// What NVRTC gives every CUDA source before its first line, for the host compiler: the module compiler
// force-includes this file (-include leap_cpu/prelude.hpp) when it compiles a trusted .cu for the CPU
// runtime. It brings the standard headers device code may use, CUDA's keywords as the host compiler
// understands them, the built-in variables and functions, vector types, atomics, intrinsics and the
// math library. cuda_fp16.h, cuda_bf16.h and cooperative_groups.h in this folder add the rest on request.
//
// __global__ and __shared__ become markers that the module compiler's source rewrite replaces (it
// registers each kernel and turns each shared variable into a reference into the block's arena); a
// source compiled without that rewrite fails on the marker's name. Candidates never come here: this
// runs the project's own and a task author's CUDA, on the host, with the host's privileges.
#pragma once

// The standard headers first, before any keyword below is defined: libstdc++ spells
// __attribute__((__noinline__)) in <memory>, which a __noinline__ macro would break.
#include <algorithm>
#include <bit>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <math.h>
#include <memory>
#include <new>
#include <source_location>
#include <stdlib.h>
#include <type_traits>
#include <utility>

#define LEAP_CPU_RUNTIME 1
#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 800
#endif
#define __CUDACC_VER_MAJOR__ 13
#define __CUDACC_VER_MINOR__ 0

#define __global__ __leap_cpu_global__
#define __shared__ __leap_cpu_shared__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __grid_constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __maxnreg__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __attribute__((aligned(n)))
#define __device_builtin__
#define __cudart_builtin__
#define __CUDA_ALIGN__(n) __attribute__((aligned(n)))

#include "leap_cpu/abi.hpp"
#include "leap_cpu/vector_types.hpp"
#include "leap_cpu/builtins.hpp"
#include "leap_cpu/rounding.hpp"
#include "leap_cpu/intrinsics.hpp"
#include "leap_cpu/atomics.hpp"
#include "leap_cpu/shared.hpp"
#include "leap_cpu/kernel_table.hpp"

// NVRTC defines none of C's floating-point macros without an include; the host headers above do. A
// source that uses them would pass here and fail to compile for the GPU, so they go.
#undef INFINITY
#undef NAN
#undef HUGE_VAL
#undef HUGE_VALF
#undef HUGE_VALL

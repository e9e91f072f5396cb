// SPDX-License-Identifier: Apache-2.0
// The stand-ins' texts. Each is small and says what it maps onto. Under C++17 and later the integer
// headers defer to libcu++ (which under NVRTC defines the global names itself, with the same types:
// int64_t is long long), so a kernel that also includes <cuda/std/...> or CUB sees one definition;
// under C++11/14, where libcu++ refuses to compile, they carry the same definitions themselves.
#include "compile/compat_headers.hpp"

#include <algorithm>
#include <array>

#include "common/sha256.hpp"

namespace leap::sandbox {
namespace {

constexpr std::string_view k_limits_h = R"hdr(// leap compat: <limits.h> for NVRTC
#pragma once
#if __cplusplus >= 201703L
#include <cuda/std/climits>
#else
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX SCHAR_MAX
#define SHRT_MIN (-SHRT_MAX - 1)
#define SHRT_MAX 0x7fff
#define USHRT_MAX 0xffff
#define INT_MIN (-INT_MAX - 1)
#define INT_MAX 0x7fffffff
#define UINT_MAX 0xffffffffU
#define LLONG_MIN (-LLONG_MAX - 1)
#define LLONG_MAX 0x7fffffffffffffffLL
#define ULLONG_MAX 0xffffffffffffffffULL
#define LONG_MIN (-LONG_MAX - 1)
#define LONG_MAX 0x7fffffffffffffffL
#define ULONG_MAX 0xffffffffffffffffUL
#endif
)hdr";

constexpr std::string_view k_climits = R"hdr(// leap compat: <climits> for NVRTC
#pragma once
#include <limits.h>
)hdr";

constexpr std::string_view k_stdint_h = R"hdr(// leap compat: <stdint.h> for NVRTC
#pragma once
#if __cplusplus >= 201703L
#include <cuda/std/cstdint>
#else
#include <limits.h>
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef int8_t int_least8_t;
typedef int16_t int_least16_t;
typedef int32_t int_least32_t;
typedef int64_t int_least64_t;
typedef uint8_t uint_least8_t;
typedef uint16_t uint_least16_t;
typedef uint32_t uint_least32_t;
typedef uint64_t uint_least64_t;
typedef int8_t int_fast8_t;
typedef int16_t int_fast16_t;
typedef int32_t int_fast32_t;
typedef int64_t int_fast64_t;
typedef uint8_t uint_fast8_t;
typedef uint16_t uint_fast16_t;
typedef uint32_t uint_fast32_t;
typedef uint64_t uint_fast64_t;
typedef int64_t intptr_t;
typedef uint64_t uintptr_t;
typedef int64_t intmax_t;
typedef uint64_t uintmax_t;
#define INT8_MIN SCHAR_MIN
#define INT16_MIN SHRT_MIN
#define INT32_MIN INT_MIN
#define INT64_MIN LLONG_MIN
#define INT8_MAX SCHAR_MAX
#define INT16_MAX SHRT_MAX
#define INT32_MAX INT_MAX
#define INT64_MAX LLONG_MAX
#define UINT8_MAX UCHAR_MAX
#define UINT16_MAX USHRT_MAX
#define UINT32_MAX UINT_MAX
#define UINT64_MAX ULLONG_MAX
#define INTPTR_MIN INT64_MIN
#define INTPTR_MAX INT64_MAX
#define UINTPTR_MAX UINT64_MAX
#define INTMAX_MIN INT64_MIN
#define INTMAX_MAX INT64_MAX
#define UINTMAX_MAX UINT64_MAX
#define PTRDIFF_MIN INT64_MIN
#define PTRDIFF_MAX INT64_MAX
#define SIZE_MAX UINT64_MAX
#define INT8_C(x) ((int_least8_t)(x))
#define INT16_C(x) ((int_least16_t)(x))
#define INT32_C(x) ((int_least32_t)(x))
#define INT64_C(x) ((int_least64_t)(x))
#define UINT8_C(x) ((uint_least8_t)(x))
#define UINT16_C(x) ((uint_least16_t)(x))
#define UINT32_C(x) ((uint_least32_t)(x))
#define UINT64_C(x) ((uint_least64_t)(x))
#define INTMAX_C(x) ((intmax_t)(x))
#define UINTMAX_C(x) ((uintmax_t)(x))
#endif
)hdr";

constexpr std::string_view k_cstdint = R"hdr(// leap compat: <cstdint> for NVRTC
#pragma once
#include <stdint.h>
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
using ::int_least8_t; using ::int_least16_t; using ::int_least32_t; using ::int_least64_t;
using ::uint_least8_t; using ::uint_least16_t; using ::uint_least32_t; using ::uint_least64_t;
using ::int_fast8_t; using ::int_fast16_t; using ::int_fast32_t; using ::int_fast64_t;
using ::uint_fast8_t; using ::uint_fast16_t; using ::uint_fast32_t; using ::uint_fast64_t;
using ::intptr_t; using ::uintptr_t; using ::intmax_t; using ::uintmax_t;
}
)hdr";

// IEEE-754 binary32/binary64 parameters; decimal literals, since hexadecimal floats need C++17.
// long double is double in device code.
constexpr std::string_view k_float_h =
    R"hdr(// leap compat: <float.h> for NVRTC (libcu++'s <cuda/std/cfloat> is empty under NVRTC)
#pragma once
#define FLT_RADIX 2
#define FLT_MANT_DIG 24
#define DBL_MANT_DIG 53
#define LDBL_MANT_DIG DBL_MANT_DIG
#define FLT_DIG 6
#define DBL_DIG 15
#define LDBL_DIG DBL_DIG
#define FLT_DECIMAL_DIG 9
#define DBL_DECIMAL_DIG 17
#define DECIMAL_DIG DBL_DECIMAL_DIG
#define FLT_MIN_EXP (-125)
#define DBL_MIN_EXP (-1021)
#define FLT_MAX_EXP 128
#define DBL_MAX_EXP 1024
#define FLT_MIN_10_EXP (-37)
#define DBL_MIN_10_EXP (-307)
#define FLT_MAX_10_EXP 38
#define DBL_MAX_10_EXP 308
#define FLT_MAX 3.40282346638528859811704183484516925e+38F
#define DBL_MAX 1.79769313486231570814527423731704357e+308
#define LDBL_MAX DBL_MAX
#define FLT_MIN 1.17549435082228750796873653722224568e-38F
#define DBL_MIN 2.22507385850720138309023271733240406e-308
#define LDBL_MIN DBL_MIN
#define FLT_EPSILON 1.19209289550781250000000000000000000e-7F
#define DBL_EPSILON 2.22044604925031308084726333618164062e-16
#define LDBL_EPSILON DBL_EPSILON
#define FLT_TRUE_MIN 1.40129846432481707092372958328991613e-45F
#define DBL_TRUE_MIN 4.94065645841246544176568792868221372e-324
#define FLT_EVAL_METHOD 0
#define FLT_ROUNDS 1
)hdr";

constexpr std::string_view k_cfloat = R"hdr(// leap compat: <cfloat> for NVRTC
#pragma once
#include <float.h>
)hdr";

// INFINITY and NAN are constant expressions in every standard mode: NVRTC has no __builtin_inff,
// but it has __builtin_bit_cast from C++11 on. <cuda/std/cmath> is not included: it costs about 3 s
// of parsing per compile (measured with NVRTC 13.0), for functions NVRTC already has built in. A
// kernel that includes it after <cmath> gets NVRTC's warning that INFINITY is redefined, nothing worse.
constexpr std::string_view k_math_h = R"hdr(// leap compat: <math.h> for NVRTC (the functions are NVRTC built-ins)
#pragma once
#ifndef INFINITY
#define INFINITY (__builtin_bit_cast(float, 0x7f800000U))
#endif
#ifndef NAN
#define NAN (__builtin_bit_cast(float, 0x7fc00000U))
#endif
#define HUGE_VALF (__builtin_bit_cast(float, 0x7f800000U))
#define HUGE_VAL (__builtin_bit_cast(double, 0x7ff0000000000000ULL))
#define HUGE_VALL HUGE_VAL
#define MAXFLOAT 3.40282346638528859811704183484516925e+38F
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#define FP_NAN 0
#define FP_INFINITE 1
#define FP_ZERO 2
#define FP_SUBNORMAL 3
#define FP_NORMAL 4
)hdr";

constexpr std::string_view k_cmath = R"hdr(// leap compat: <cmath> for NVRTC: std:: names for NVRTC's built-in math
#pragma once
#include <math.h>
namespace std {
using ::abs; using ::fabs; using ::fmod; using ::remainder; using ::remquo; using ::fma; using ::fmax; using ::fmin;
using ::fdim; using ::exp; using ::exp2; using ::expm1; using ::log; using ::log10; using ::log2; using ::log1p;
using ::pow; using ::sqrt; using ::cbrt; using ::hypot; using ::sin; using ::cos; using ::tan; using ::asin;
using ::acos; using ::atan; using ::atan2; using ::sinh; using ::cosh; using ::tanh; using ::asinh; using ::acosh;
using ::atanh; using ::erf; using ::erfc; using ::tgamma; using ::lgamma; using ::ceil; using ::floor;
using ::trunc; using ::round; using ::lround; using ::llround; using ::nearbyint; using ::rint; using ::lrint;
using ::llrint; using ::frexp; using ::ldexp; using ::modf; using ::scalbn; using ::scalbln; using ::ilogb;
using ::logb; using ::nextafter; using ::copysign; using ::nan; using ::isfinite; using ::isinf; using ::isnan;
using ::signbit; using ::min; using ::max;
using ::sqrtf; using ::expf; using ::logf; using ::powf; using ::fabsf; using ::fmaxf; using ::fminf;
using ::sinf; using ::cosf; using ::tanhf; using ::floorf; using ::ceilf; using ::roundf; using ::truncf; using ::fmaf;
}
)hdr";

constexpr std::string_view k_stdio_h =
    R"hdr(// leap compat: <stdio.h> for NVRTC: printf is an NVRTC built-in (device printf)
#pragma once
#ifndef EOF
#define EOF (-1)
#endif
)hdr";

constexpr std::string_view k_cstdio = R"hdr(// leap compat: <cstdio> for NVRTC
#pragma once
#include <stdio.h>
namespace std { using ::printf; }
)hdr";

// offsetof: NVRTC has no __builtin_offsetof, but its front end's __INTADDR__ keeps the value a constant
// expression (libcu++'s definition under NVRTC is not one).

// No include guard: like the standard's, each inclusion redefines assert for the NDEBUG then in force.
constexpr std::string_view k_assert_h =
    R"hdr(// leap compat: <assert.h> for NVRTC (traps through __assertfail, as NVRTC's built-in assert does)
#undef assert
#ifdef NDEBUG
#define assert(e) (static_cast<void>(0))
#else
#define assert(e) ((e) ? static_cast<void>(0) : __assertfail(#e, __FILE__, __LINE__, __PRETTY_FUNCTION__, sizeof(char)))
#endif
)hdr";

constexpr std::string_view k_cassert = R"hdr(// leap compat: <cassert> for NVRTC
#include <assert.h>
)hdr";

constexpr std::string_view k_stddef_h =
    R"hdr(// leap compat: <stddef.h> for NVRTC: size_t and ptrdiff_t are NVRTC built-ins
#pragma once
typedef decltype(nullptr) nullptr_t;
struct max_align_t { alignas(16) long long leap_compat_storage_[2]; };
#ifndef offsetof
#define offsetof(type, member) (static_cast<size_t>(__INTADDR__(&(static_cast<type*>(0)->member))))
#endif
)hdr";

constexpr std::string_view k_cstddef = R"hdr(// leap compat: <cstddef> for NVRTC
#pragma once
#include <stddef.h>
#if __cplusplus >= 201703L
#include <cuda/std/cstddef>
#endif
namespace std {
using ::size_t; using ::ptrdiff_t; using ::nullptr_t; using ::max_align_t;
#if __cplusplus >= 201703L
using ::cuda::std::byte; using ::cuda::std::to_integer;
#endif
}
)hdr";

constexpr std::string_view k_stdlib_h =
    R"hdr(// leap compat: <stdlib.h> for NVRTC: malloc, free, abs, labs and llabs are NVRTC built-ins
#pragma once
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
)hdr";

constexpr std::string_view k_cstdlib = R"hdr(// leap compat: <cstdlib> for NVRTC
#pragma once
#include <stdlib.h>
namespace std { using ::malloc; using ::free; using ::abs; using ::labs; using ::llabs; }
)hdr";

// memcpy and memset are NVRTC built-ins; memcmp and strlen are not, so they get small device versions.
constexpr std::string_view k_string_h = R"hdr(// leap compat: <string.h> for NVRTC
#pragma once
__device__ inline int memcmp(const void* a, const void* b, size_t n) {
  const unsigned char* x = static_cast<const unsigned char*>(a);
  const unsigned char* y = static_cast<const unsigned char*>(b);
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  }
  return 0;
}
__device__ inline size_t strlen(const char* s) {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  return n;
}
)hdr";

constexpr std::string_view k_cstring = R"hdr(// leap compat: <cstring> for NVRTC
#pragma once
#include <string.h>
namespace std { using ::memcpy; using ::memset; using ::memcmp; using ::strlen; }
)hdr";

constexpr std::string_view k_limits = R"hdr(// leap compat: <limits> for NVRTC: std::numeric_limits is libcu++'s
#pragma once
#if __cplusplus < 201703L
#error "<limits> is provided through libcu++, which needs C++17 or later: compile with --std 17 (the default)"
#endif
#include <cuda/std/limits>
namespace std {
using ::cuda::std::numeric_limits; using ::cuda::std::float_round_style; using ::cuda::std::float_denorm_style;
using ::cuda::std::round_indeterminate; using ::cuda::std::round_toward_zero; using ::cuda::std::round_to_nearest;
using ::cuda::std::round_toward_infinity; using ::cuda::std::round_toward_neg_infinity;
}
)hdr";

constexpr std::string_view k_type_traits = R"hdr(// leap compat: <type_traits> for NVRTC: the traits are libcu++'s
#pragma once
#if __cplusplus < 201703L
#error "<type_traits> is provided through libcu++, which needs C++17 or later: compile with --std 17 (the default)"
#endif
#include <cuda/std/type_traits>
namespace std { using namespace ::cuda::std; }
)hdr";

constexpr std::string_view k_utility =
    R"hdr(// leap compat: <utility> for NVRTC: std::move, std::forward, std::pair... are libcu++'s
#pragma once
#if __cplusplus < 201703L
#error "<utility> is provided through libcu++, which needs C++17 or later: compile with --std 17 (the default)"
#endif
#include <cuda/std/utility>
namespace std { using namespace ::cuda::std; }
)hdr";

// NVRTC has the device side of the runtime built in (threadIdx, vector types, atomics, intrinsics);
// what device code still reads from these headers is the version.
constexpr std::string_view k_cuda_runtime_api_h =
    R"hdr(// leap compat: <cuda_runtime_api.h> for NVRTC: nothing is needed in device code
#pragma once
#ifndef CUDART_VERSION
#define CUDART_VERSION (__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10)
#endif
)hdr";

constexpr std::string_view k_cuda_runtime_h =
    R"hdr(// leap compat: <cuda_runtime.h> for NVRTC: nothing is needed in device code
#pragma once
#include <cuda_runtime_api.h>
)hdr";

constexpr std::string_view k_device_launch_parameters_h =
    R"hdr(// leap compat: <device_launch_parameters.h> for NVRTC: threadIdx, blockIdx, blockDim, gridDim and warpSize are built in
#pragma once
)hdr";

constexpr std::string_view k_cuda_h =
    R"hdr(// leap compat: <cuda.h> for NVRTC: the driver API is host code; the version and the pointer type remain
#pragma once
#ifndef CUDA_VERSION
#define CUDA_VERSION (__CUDACC_VER_MAJOR__ * 1000 + __CUDACC_VER_MINOR__ * 10)
#endif
typedef unsigned long long CUdeviceptr;
)hdr";

constexpr std::array<CompatHeader, 25> k_headers = {{
    {"stdint.h", "fixed-width integers and their limits", k_stdint_h},
    {"cstdint", "fixed-width integers, also in std::", k_cstdint},
    {"limits.h", "CHAR_BIT, INT_MAX, LLONG_MAX and the other integer limits", k_limits_h},
    {"climits", "the integer limits", k_climits},
    {"float.h", "FLT_MAX, FLT_EPSILON, DBL_MAX and the other floating-point limits", k_float_h},
    {"cfloat", "the floating-point limits", k_cfloat},
    {"math.h", "INFINITY, NAN, HUGE_VALF, M_PI and friends; the functions are built in", k_math_h},
    {"cmath", "the math constants, and the built-in math functions in std::", k_cmath},
    {"stdio.h", "device printf (built in)", k_stdio_h},
    {"cstdio", "device printf, also as std::printf", k_cstdio},
    {"assert.h", "assert, honouring NDEBUG", k_assert_h},
    {"cassert", "assert, honouring NDEBUG", k_cassert},
    {"stddef.h", "size_t, ptrdiff_t, nullptr_t, max_align_t, offsetof", k_stddef_h},
    {"cstddef", "the same in std::, and std::byte from C++17", k_cstddef},
    {"stdlib.h", "device malloc, free, abs (built in), EXIT_SUCCESS", k_stdlib_h},
    {"cstdlib", "the same in std::", k_cstdlib},
    {"string.h", "memcpy, memset (built in), memcmp, strlen", k_string_h},
    {"cstring", "the same in std::", k_cstring},
    {"limits", "std::numeric_limits from libcu++ (C++17 and later)", k_limits},
    {"type_traits", "std:: type traits from libcu++ (C++17 and later)", k_type_traits},
    {"utility", "std::move, std::forward, std::pair... from libcu++ (C++17 and later)", k_utility},
    {"cuda_runtime.h", "empty for device code: CUDART_VERSION only", k_cuda_runtime_h},
    {"cuda_runtime_api.h", "empty for device code: CUDART_VERSION only", k_cuda_runtime_api_h},
    {"device_launch_parameters.h", "empty: the launch parameters are built in", k_device_launch_parameters_h},
    {"cuda.h", "CUDA_VERSION and CUdeviceptr; the driver API is host code", k_cuda_h},
}};

}  // namespace

std::span<const CompatHeader> compat_headers() noexcept { return k_headers; }

bool is_compat_header(std::string_view name) noexcept {
  return std::any_of(k_headers.begin(), k_headers.end(), [&](const CompatHeader& h) { return h.name == name; });
}

std::string compat_headers_tag() {
  Sha256 h;
  for (const CompatHeader& c : k_headers) {
    h.update(c.name);
    h.update(std::string_view("\0", 1));
    h.update(c.content);
    h.update(std::string_view("\0", 1));
  }
  return "compat " + to_hex(h.finish()).substr(0, 16);
}

}  // namespace leap::sandbox

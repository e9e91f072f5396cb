// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's <math_constants.h>: CUDA's named float and double constants.
#pragma once

#include "leap_cpu/intrinsics.hpp"

#define CUDART_INF_F __int_as_float(0x7f800000)
#define CUDART_NAN_F __int_as_float(0x7fffffff)
#define CUDART_MIN_DENORM_F __int_as_float(0x00000001)
#define CUDART_MAX_NORMAL_F __int_as_float(0x7f7fffff)
#define CUDART_NEG_ZERO_F __int_as_float(static_cast<int>(0x80000000u))
#define CUDART_ZERO_F 0.0F
#define CUDART_ONE_F 1.0F
#define CUDART_SQRT_HALF_F 0.707106781F
#define CUDART_SQRT_TWO_F 1.414213562F
#define CUDART_THIRD_F 0.333333333F
#define CUDART_PIO4_F 0.785398163F
#define CUDART_PIO2_F 1.570796327F
#define CUDART_3PIO4_F 2.356194490F
#define CUDART_2_OVER_PI_F 0.636619772F
#define CUDART_PI_F 3.141592654F
#define CUDART_L2E_F 1.442695041F
#define CUDART_L2T_F 3.321928094F
#define CUDART_LG2_F 0.301029996F
#define CUDART_LGE_F 0.434294482F
#define CUDART_LN2_F 0.693147181F
#define CUDART_LNT_F 2.302585093F
#define CUDART_LNPI_F 1.144729886F
#define CUDART_INF __longlong_as_double(0x7ff0000000000000LL)
#define CUDART_NAN __longlong_as_double(static_cast<long long>(0xfff8000000000000ULL))
#define CUDART_NEG_ZERO __longlong_as_double(static_cast<long long>(0x8000000000000000ULL))
#define CUDART_MIN_DENORM __longlong_as_double(0x0000000000000001LL)
#define CUDART_ZERO 0.0
#define CUDART_ONE 1.0
#define CUDART_SQRT_TWO 1.4142135623730951e+0
#define CUDART_SQRT_HALF 7.0710678118654757e-1
#define CUDART_PIO4 7.8539816339744828e-1
#define CUDART_PIO2 1.5707963267948966e+0
#define CUDART_2_OVER_PI 6.3661977236758138e-1
#define CUDART_PI 3.1415926535897931e+0
#define CUDART_SQRT_2PI 2.5066282746310007e+0
#define CUDART_SQRT_PIO2 1.2533141373155003e+0
#define CUDART_L2E 1.4426950408889634e+0
#define CUDART_LN2 6.9314718055994529e-1

// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's <cuda_bf16.h>: __nv_bfloat16 and __nv_bfloat162 (and, as CUDA's, __half).
#pragma once

#include "leap_cpu/bfloat16.hpp"

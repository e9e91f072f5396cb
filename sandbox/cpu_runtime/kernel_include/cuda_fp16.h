// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's <cuda_fp16.h>: __half and __half2.
#pragma once

#include "leap_cpu/half.hpp"

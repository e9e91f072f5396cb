// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's <cuda_runtime_api.h>: what a kernel source may use of it is in the prelude.
#pragma once

#include "leap_cpu/prelude.hpp"

// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's <cooperative_groups.h>: the block, tiles up to a warp, reduce (leap_cpu/cooperative_groups.hpp).
#pragma once

#include "leap_cpu/cooperative_groups.hpp"

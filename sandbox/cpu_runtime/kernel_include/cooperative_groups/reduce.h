// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's <cooperative_groups/reduce.h>: with the groups in leap_cpu/cooperative_groups.hpp.
#pragma once

#include "leap_cpu/cooperative_groups.hpp"

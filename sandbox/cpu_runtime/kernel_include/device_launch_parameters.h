// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's <device_launch_parameters.h>: threadIdx and its kin are in the prelude.
#pragma once

#include "leap_cpu/prelude.hpp"

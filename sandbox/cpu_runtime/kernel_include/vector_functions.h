// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's <vector_functions.h>: the make_ functions are with the vector types.
#pragma once

#include "leap_cpu/vector_types.hpp"

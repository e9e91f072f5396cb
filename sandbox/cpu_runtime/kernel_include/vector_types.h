// SPDX-License-Identifier: Apache-2.0
// The CPU runtime's <vector_types.h>.
#pragma once

#include "leap_cpu/vector_types.hpp"

// SPDX-License-Identifier: Apache-2.0
// Kept only for the two sources that still include it by this name (evaluation/worker_loop.cpp and
// protocol/frames.cpp, which another change is rewriting): new code includes the header of the one
// idea it uses, and this file goes once those two name theirs.
#pragma once

#include "common/fd_io.hpp"
#include "evaluation/driver_probe.hpp"

// SPDX-License-Identifier: Apache-2.0
// Everything in leap's core. Include single headers instead to keep compile times down.
#pragma once

#include "leap/baselines.hpp"
#include "leap/eigen.hpp"
#include "leap/json.hpp"
#include "leap/kernel_order.hpp"
#include "leap/outcome.hpp"
#include "leap/rank_advantage.hpp"
#include "leap/trajectory.hpp"
#include "leap/turn_credit.hpp"
#include "leap/verdict.hpp"
#include "leap/version.hpp"

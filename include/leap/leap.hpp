// SPDX-License-Identifier: Apache-2.0
// Everything in leap's core. Include single headers instead to keep compile times down.
#pragma once

#include "leap/advantage_estimator.hpp"
#include "leap/baselines.hpp"
#include "leap/difficulty_tracker.hpp"
#include "leap/eigen.hpp"
#include "leap/executor.hpp"
#include "leap/gate.hpp"
#include "leap/gates.hpp"
#include "leap/group_buffer.hpp"
#include "leap/json.hpp"
#include "leap/kernel_order.hpp"
#include "leap/metrics_json.hpp"
#include "leap/outcome.hpp"
#include "leap/rank_advantage.hpp"
#include "leap/rank_advantage_of_scores.hpp"
#include "leap/rollout.hpp"
#include "leap/step_metrics.hpp"
#include "leap/trajectory.hpp"
#include "leap/turn_credit.hpp"
#include "leap/verdict.hpp"
#include "leap/version.hpp"

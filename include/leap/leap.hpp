// SPDX-License-Identifier: Apache-2.0
// Everything in leap's core. Include single headers instead to keep compile times down.
//
// The core needs the standard library alone. The Eigen views (leap/eigen.hpp, target leap::eigen)
// and the nlohmann/json adapters (leap/json.hpp and leap/metrics_json.hpp, target leap::json) come
// along where their library's headers are reachable, as they are once that target is linked; include
// them by name to get a clear error where they are not.
#pragma once

#include "leap/advantage_estimator.hpp"
#include "leap/advantage_normalization.hpp"
#include "leap/advantage_workspace.hpp"
#include "leap/baselines.hpp"
#include "leap/difficulty_tracker.hpp"
#include "leap/executor.hpp"
#include "leap/gate.hpp"
#include "leap/gate_policies.hpp"
#include "leap/group_buffer.hpp"
#include "leap/kernel_order.hpp"
#include "leap/outcome.hpp"
#include "leap/rank_advantage.hpp"
#include "leap/rank_advantage_of_scores.hpp"
#include "leap/rollout.hpp"
#include "leap/step_metrics.hpp"
#include "leap/trajectory.hpp"
#include "leap/turn_credit.hpp"
#include "leap/verdict.hpp"
#include "leap/version.hpp"

#if __has_include(<Eigen/Core>)
#include "leap/eigen.hpp"
#endif
#if __has_include(<nlohmann/json.hpp>)
#include "leap/json.hpp"
#include "leap/metrics_json.hpp"
#endif

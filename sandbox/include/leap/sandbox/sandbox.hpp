// SPDX-License-Identifier: Apache-2.0
// The public API of leap::sandbox, every installed header but the fleet's (leap::sandbox_fleet:
// fleet_client.hpp, fleet_environment.hpp, fleet_address.hpp, fleet_key.hpp). The library's
// internals (the include jail, confinement, the GPU runner, ...) are not installed.
#pragma once

#include "leap/sandbox/builtin_tasks.hpp"
#include "leap/sandbox/compile_cache.hpp"
#include "leap/sandbox/compile_options.hpp"
#include "leap/sandbox/compile_result.hpp"
#include "leap/sandbox/compile_target.hpp"
#include "leap/sandbox/compiler.hpp"
#include "leap/sandbox/driver_probe.hpp"
#include "leap/sandbox/evaluator.hpp"
#include "leap/sandbox/launch_plan.hpp"
#include "leap/sandbox/request_handler.hpp"
#include "leap/sandbox/run_switches.hpp"
#include "leap/sandbox/task.hpp"
#include "leap/sandbox/timing_evidence.hpp"

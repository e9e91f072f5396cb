// SPDX-License-Identifier: Apache-2.0
// Everything in leap::sandbox.
#pragma once

#include "leap/sandbox/builtin_tasks.hpp"
#include "leap/sandbox/check.hpp"
#include "leap/sandbox/compile_cache.hpp"
#include "leap/sandbox/compile_options.hpp"
#include "leap/sandbox/compile_result.hpp"
#include "leap/sandbox/compiler.hpp"
#include "leap/sandbox/driver_probe.hpp"
#include "leap/sandbox/evaluator.hpp"
#include "leap/sandbox/include_jail.hpp"
#include "leap/sandbox/request_handler.hpp"
#include "leap/sandbox/sha256.hpp"
#include "leap/sandbox/size_expr.hpp"
#include "leap/sandbox/task.hpp"
#include "leap/sandbox/timer_choice.hpp"
#include "leap/sandbox/worker.hpp"

// SPDX-License-Identifier: Apache-2.0
// The evaluator's reading of a runner's evaluation reply: verdict, CUDA error, detail, timing and
// speedup, and the feedback line the policy sees. Internal; tested with replies from the CPU fake.
#pragma once

#include <string_view>

#include "leap/sandbox/evaluator.hpp"
#include "runner_pipe/evaluation_reply.hpp"

namespace leap::sandbox::detail {

// Fills r.status, verdict, cuda_error, detail, feedback, timings, speedup (or why it is unknown),
// device, trials (or r.error when the reply reports a harness failure or no verdict).
void read_runner_reply(const EvaluationReply& reply, EvalResult& r);

// True when the module's PTX calls the device heap (malloc): the heap outlives the module, so the
// runner that ran it is replaced before the next evaluation. Reads the PTX once, line by line, and
// only a line that is a declaration counts: the PTX holds the candidate's inline-asm text.
bool references_device_malloc(std::string_view ptx);

}  // namespace leap::sandbox::detail

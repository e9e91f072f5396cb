// SPDX-License-Identifier: Apache-2.0
// The line layer of the request protocol, apart from what the ops do: limits, parsing, the id as
// written, the one exception boundary and the error codes. RequestHandler answers through it with
// the real ops; the fuzz harness of serve's line handler with ops that compile nothing. Internal.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "leap/sandbox/request_handler.hpp"
#include "leap/sandbox/task.hpp"
#include "serve/request_codec.hpp"  // ErrorCode, failure_response

namespace leap::sandbox::detail {

// Answers one parsed request object with its "result"; throws std::invalid_argument (or a
// nlohmann::json exception) for a bad request, anything else for a failure of the sandbox.
using RequestAnswer = std::function<nlohmann::json(const nlohmann::json& request)>;

std::string answer_request_line(std::string_view line, const RequestLimits& limits,
                                const RequestAnswer& answer) noexcept;
std::string answer_too_large(std::string_view start, std::size_t total_bytes, const RequestLimits& limits) noexcept;

// The fields the ops read, checked: "source" must be a string; "task" a built-in name or a spec object.
const std::string& required_source(const nlohmann::json& request, const char* op);
TaskSpec requested_task(const nlohmann::json& request);

}  // namespace leap::sandbox::detail

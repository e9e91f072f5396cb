// SPDX-License-Identifier: Apache-2.0
// The sandbox's request protocol: one JSON request in, one JSON response out. `leap-sandbox serve`
// (requests on stdin) and a fleet worker (requests from a queue) both answer through this one
// handler, so a request means the same thing however it arrives.
//
//   {"id": 1, "op": "info"}
//   {"id": 2, "op": "compile", "source": "...", "arch": "sm_90", "std": 17, "default_device": false,
//    "defines": {"N": "4"}, "headers": {"util.cuh": "..."}}      (all but "source" optional)
//   {"id": 3, "op": "eval", "task": "softmax" | {spec}, "source": "..."}
//
// Response: {"id": ..., "ok": true, "result": {...}} or {"id": ..., "ok": false, "error": "..."}.
// A line that is not a JSON object with an "id" is answered with "id": null.
#pragma once

#include <string>
#include <string_view>

#include "leap/sandbox/evaluator.hpp"

namespace leap::sandbox {

class RequestHandler {
 public:
  explicit RequestHandler(Evaluator& evaluator) noexcept : evaluator_(&evaluator) {}

  // One request line in, one response line out (no trailing newline). Thread-safe as the evaluator
  // is; never throws for anything the line contains: a bad request is an error response.
  std::string handle(std::string_view request_line) const;

 private:
  Evaluator* evaluator_;
};

}  // namespace leap::sandbox

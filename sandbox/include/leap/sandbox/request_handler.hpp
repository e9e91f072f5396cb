// SPDX-License-Identifier: Apache-2.0
// The sandbox's request protocol: one JSON request in, one JSON response out. `leap-sandbox serve`
// (requests on stdin) and a fleet member (requests from a queue) both answer through this one
// handler, so a request means the same thing however it arrives.
//
//   {"id": 1, "op": "info"}
//   {"id": 2, "op": "compile", "source": "...", "arch": "sm_90", "std": 17, "default_device": false,
//    "defines": {"N": "4"}, "headers": {"util.cuh": "..."}}      (all but "source" optional)
//   {"id": 3, "op": "eval", "task": "softmax" | {spec}, "source": "..."}
//
// Response: {"id": ..., "ok": true, "result": {...}} or {"id": ..., "ok": false, "code": "...",
// "error": "..."}. The id is echoed byte for byte as the request wrote it (any JSON value: a 30-digit
// integer comes back as those 30 digits). Error codes:
//   parse_error        the line is not JSON within the limits (too deep, a number out of range,
//                      malformed); "id" is null
//   request_too_large  the line is longer than the limit; "id" is null unless the line began with one
//   invalid_request    JSON, but not an object with an "id"; "id" is null
//   bad_request        the request itself is wrong (unknown op, no source, a bad task spec, bad options)
//   internal_error     the sandbox failed while answering (the request may be retried)
// So a request whose id was null is told apart from a line that could not be read by its code.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "leap/sandbox/evaluator.hpp"

namespace leap::sandbox {

struct RequestLimits {
  std::size_t max_request_bytes = std::size_t{4} << 20;  // one request line, without its newline
  int max_depth = 64;  // arrays and objects nested in a request (a task spec allows less inside it)
};

class RequestHandler {
 public:
  // Throws std::invalid_argument for limits that leave no room for a request (below 1 KiB or depth 2).
  explicit RequestHandler(Evaluator& evaluator, RequestLimits limits = {});

  // One request line in, one response line out (no trailing newline). Thread-safe as the evaluator
  // is. Every exception while reading or answering becomes an error response inside this call.
  std::string handle(std::string_view request_line) const noexcept;
  // The response to a line longer than max_request_bytes that a reader did not keep whole:
  // `start` is what it kept (at most the limit), `total_bytes` how long the line was.
  std::string too_large(std::string_view start, std::size_t total_bytes) const noexcept;

  const RequestLimits& limits() const noexcept { return limits_; }

 private:
  Evaluator* evaluator_;
  RequestLimits limits_;
};

}  // namespace leap::sandbox

// SPDX-License-Identifier: Apache-2.0
// A request the sandbox could not read, refused by the client before it is sent: the C++ twin of
// Python's leap.sandbox.RequestEncodingError. `leap-sandbox serve` and a fleet member answer a line
// they cannot read with "id": null (parse_error), which names no request, so leap::sandbox::FleetClient
// checks each request by their reader's rules (docs/serve-protocol.md, "Clients and unreadable lines")
// and throws this at submit instead: nothing is sent and no request is left waiting. Refused: a string
// or key that is not valid UTF-8, a NaN or infinite number, arrays and objects nested past the depth
// limit (64; the request itself is level 1), a line past the members' --max-request-bytes.
//
//   try { fleet.eval(task, source); }
//   catch (const leap::sandbox::RequestEncodingError& e) { e.field(); e.problem(); }   // "source", "is not ..."
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace leap::sandbox {

class RequestEncodingError : public std::invalid_argument {
 public:
  RequestEncodingError(std::string field, std::string problem)
      : std::invalid_argument("leap::sandbox: cannot send the request: " +
                              (field.empty() ? std::string("the request") : "field '" + field + "'") + " " + problem),
        what_(std::make_shared<const Parts>(Parts{std::move(field), std::move(problem)})) {}

  // The value refused, as a path into the request: "source", "task", "task.inputs[2].shape"; empty for
  // the request object itself.
  const std::string& field() const noexcept { return what_->field; }
  // What is wrong with it, e.g. "is not valid UTF-8 (...)"; the message is "... field 'F' <problem>".
  const std::string& problem() const noexcept { return what_->problem; }

 private:
  struct Parts {
    std::string field;
    std::string problem;
  };
  std::shared_ptr<const Parts> what_;  // shared: copying an exception does not throw
};

}  // namespace leap::sandbox

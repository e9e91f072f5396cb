// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: serve's line handler (limits, parsing, the id as written, the exception
// boundary, the response) with ops that compile nothing: "eval" reads the task the way the real op
// does, others echo the request, "throw" fails as the sandbox might. Every line must get exactly
// one line of valid JSON with an id and ok, carrying the request's id byte for byte when it had one.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/bounded_json.hpp"
#include "serve/request_line.hpp"

namespace sb = leap::sandbox;
using nlohmann::json;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const sb::RequestLimits limits{2048, 16};
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  const std::string response = sb::detail::answer_request_line(line, limits, [](const json& request) -> json {
    const auto op = request.find("op");
    const std::string name = op != request.end() && op->is_string() ? op->get<std::string>() : "";
    if (name == "eval") {
      (void)sb::detail::required_source(request, "eval");
      return json::parse(sb::task_to_json(sb::detail::requested_task(request)));
    }
    if (name == "throw") throw std::runtime_error("the sandbox failed");
    if (name == "value") return json{{"arch", request.value("arch", "sm_90")}};  // throws type_error for a non-string
    return json{{"echo", request}};
  });
  if (response.empty() || response.find('\n') != std::string::npos) std::abort();
  const json r = json::parse(response);  // throws (and so fails) if the response is not JSON
  if (!r.is_object() || !r.contains("id") || !r.contains("ok")) std::abort();
  // The id as written comes back as written.
  json request;
  try {
    request = sb::detail::parse_bounded_json(line, {limits.max_request_bytes, limits.max_depth});
  } catch (const std::exception&) {
    // Unreadable: id null; only a line over the limit may get back the id it began with.
    if (size <= limits.max_request_bytes && !r.at("id").is_null()) std::abort();
    return 0;
  }
  if (size <= limits.max_request_bytes && request.is_object() && request.contains("id")) {
    const auto sent = sb::detail::raw_member(line, "id");
    const auto got = sb::detail::raw_member(response, "id");
    if (!sent || !got || *sent != *got || json::parse(*sent) != request.at("id")) std::abort();
  }
  return 0;
}

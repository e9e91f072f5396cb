// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness: the GPU runner protocol's frame reader and CBOR decoder. The bytes go through a
// pipe into read_frame exactly as a hostile GPU runner would send them; whatever payload comes out is
// checked by the non-recursive CBOR walk and decoded. Only the documented failures may happen.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/bounded_json.hpp"
#include "runner_pipe/frames.hpp"

namespace dt = leap::sandbox::detail;

namespace {

void decode(std::string_view payload) {
  const dt::JsonLimits limits{dt::k_max_frame, dt::k_frame_limits.max_depth};
  const std::string problem = dt::cbor_problem(payload, limits);
  try {
    const nlohmann::json j = dt::decode_bounded_cbor(payload, limits);
    if (!problem.empty()) std::abort();  // the walk refused what the decoder took
    (void)j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const dt::JsonLimitError&) {
    if (problem.empty()) std::abort();
  } catch (const nlohmann::json::exception&) {}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  decode(bytes);  // the payload alone
  // And as a stream of frames through a pipe (small inputs fit the pipe buffer without a reader).
  if (size > 60000) return 0;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return 0;
  const bool written = ::write(fds[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  ::close(fds[1]);
  if (written) {
    for (int frames = 0; frames < 64; ++frames) {
      dt::FrameKind kind{};
      std::string payload;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      if (dt::read_frame(fds[0], kind, payload, deadline) != dt::ReadStatus::ok) break;
      if (kind == dt::FrameKind::reply || kind == dt::FrameKind::request) decode(payload);
    }
  }
  ::close(fds[0]);
  return 0;
}

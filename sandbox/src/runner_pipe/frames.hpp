// SPDX-License-Identifier: Apache-2.0
// The runner protocol's framing: [u32 little-endian length][u8 kind][payload]. The parent sends a
// request; the runner answers with any number of stage announcements, then one reply (FrameKind).
// Internal.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "common/bounded_json.hpp"

namespace leap::sandbox::detail {

// A frame longer than this is refused before anything is allocated for it (two CUBINs and a task
// fit many times over).
constexpr std::size_t k_max_frame = std::size_t{256} << 20;
// What a CBOR payload may hold: the frame's size and the nesting depth of the protocol's messages
// with room to spare.
constexpr JsonLimits k_frame_limits{k_max_frame, 32};

// What a frame carries; the byte on the wire is the enumerator's value.
enum class FrameKind : char {
  // Parent to runner: one operation (CBOR), answered by exactly one reply.
  request = 'Q',
  // Runner to parent: the step the runner is in now (text), so a timeout or a death can be blamed on
  // the candidate's code or on the harness.
  stage = 'S',
  // Runner to parent: the answer to the request (CBOR); the call is over.
  reply = 'R',
};

bool write_frame(int fd, FrameKind kind, std::string_view payload);

enum class ReadStatus { ok, eof, timeout, error };
// Reads one frame; gives up at the deadline.
ReadStatus read_frame(int fd, FrameKind& kind, std::string& payload, std::chrono::steady_clock::time_point deadline);
// Blocking read of one frame (the runner side).
ReadStatus read_frame(int fd, FrameKind& kind, std::string& payload);

}  // namespace leap::sandbox::detail

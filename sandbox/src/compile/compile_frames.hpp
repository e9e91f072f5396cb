// SPDX-License-Identifier: Apache-2.0
// Length-prefixed frames between a Compiler and its compile processes (a pooled compiler, the
// compile launcher): an 8-byte little-endian length, then that many bytes. Unlike serve's frames
// (protocol/frames.hpp) they carry no kind: each side knows what comes next.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace leap::sandbox::detail {

// A frame longer than this is refused before anything is allocated for it.
inline constexpr unsigned long long k_max_compile_frame = 1ull << 30;

std::string frame(std::string_view payload);

enum class Sent { all, failed, past_deadline };
// Sends all of `data` before `deadline`: a process that stopped reading (stopped by a signal, or
// wedged) fills the socket's buffer, and a blocking send would wait for ever. Never SIGPIPE: a dead
// peer is an answer, not a signal.
Sent send_before(int fd, std::string_view data, std::chrono::steady_clock::time_point deadline);
// As above, asking `gave_up()` every 20 ms while the peer takes nothing: true ends the send (failed).
Sent send_before(int fd, std::string_view data, std::chrono::steady_clock::time_point deadline,
                 const std::function<bool()>& gave_up);

bool read_exactly(int fd, char* out, std::size_t n);
// Blocking: one whole frame, or false when the peer closed the socket or sent a frame too long.
bool read_frame(int fd, std::string& payload);
// A complete frame at the front of `data`, if there is one.
std::optional<std::string_view> complete_frame(const std::string& data);
bool has_frame(const std::string& data);

}  // namespace leap::sandbox::detail

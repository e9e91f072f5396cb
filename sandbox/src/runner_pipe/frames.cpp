// SPDX-License-Identifier: Apache-2.0
#include "runner_pipe/frames.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/fd_io.hpp"

namespace leap::sandbox::detail {
namespace {

// Reads exactly n bytes; the deadline is optional (time_point::max() = none).
ReadStatus read_exact(int fd, char* p, std::size_t n, std::chrono::steady_clock::time_point deadline) {
  while (n > 0) {
    if (deadline != std::chrono::steady_clock::time_point::max()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return ReadStatus::timeout;
      pollfd pfd{fd, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 1000)));
      if (ready < 0 && errno != EINTR) return ReadStatus::error;
      if (ready <= 0) continue;
    }
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return ReadStatus::eof;
    if (r < 0) return ReadStatus::error;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return ReadStatus::ok;
}

}  // namespace

bool write_frame(int fd, FrameKind kind, std::string_view payload) {
  if (payload.size() > k_max_frame) return false;
  const auto len = static_cast<std::uint32_t>(payload.size());
  char head[5] = {static_cast<char>(len & 0xFF), static_cast<char>((len >> 8) & 0xFF),
                  static_cast<char>((len >> 16) & 0xFF), static_cast<char>((len >> 24) & 0xFF),
                  static_cast<char>(kind)};
  return write_all(fd, std::string_view(head, 5)) && write_all(fd, payload);
}

ReadStatus read_frame(int fd, FrameKind& kind, std::string& payload, std::chrono::steady_clock::time_point deadline) {
  char head[5];
  ReadStatus s = read_exact(fd, head, 5, deadline);
  if (s != ReadStatus::ok) return s;
  std::uint32_t len = 0;
  for (int i = 3; i >= 0; --i) len = (len << 8) | static_cast<unsigned char>(head[i]);
  if (len > k_max_frame) return ReadStatus::error;
  kind = static_cast<FrameKind>(head[4]);  // any byte: the reader decides what it accepts
  // The buffer grows with the bytes that arrive, so a length that lies costs no more memory than
  // what the writer really sent.
  payload.clear();
  constexpr std::size_t step = std::size_t{1} << 20;
  while (payload.size() < len) {
    const std::size_t have = payload.size();
    const std::size_t n = std::min<std::size_t>(step, len - have);
    payload.resize(have + n);
    s = read_exact(fd, payload.data() + have, n, deadline);
    if (s != ReadStatus::ok) return s == ReadStatus::eof ? ReadStatus::error : s;
  }
  return ReadStatus::ok;
}

ReadStatus read_frame(int fd, FrameKind& kind, std::string& payload) {
  return read_frame(fd, kind, payload, std::chrono::steady_clock::time_point::max());
}

}  // namespace leap::sandbox::detail

// SPDX-License-Identifier: Apache-2.0
#include "compile/compile_frames.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "common/little_endian.hpp"

namespace leap::sandbox::detail {

std::string frame(std::string_view payload) {
  std::string out;
  put_u64(out, payload.size());
  out.append(payload);
  return out;
}

Sent send_before(int fd, std::string_view data, std::chrono::steady_clock::time_point deadline) {
  return send_before(fd, data, deadline, {});
}

Sent send_before(int fd, std::string_view data, std::chrono::steady_clock::time_point deadline,
                 const std::function<bool()>& gave_up) {
  while (!data.empty()) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return Sent::past_deadline;
    pollfd pfd{fd, POLLOUT, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, gave_up ? 20 : 1000)));
    if (ready < 0 && errno != EINTR) return Sent::failed;
    if (ready == 0 && gave_up && gave_up()) return Sent::failed;
    if (ready <= 0) continue;
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n <= 0) return Sent::failed;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return Sent::all;
}

bool read_exactly(int fd, char* out, std::size_t n) {
  while (n > 0) {
    const ssize_t r = ::read(fd, out, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    out += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool read_frame(int fd, std::string& payload) {
  char head[8];
  if (!read_exactly(fd, head, sizeof head)) return false;
  std::string_view h(head, sizeof head);
  unsigned long long n = 0;
  if (!get_u64(h, n) || n > k_max_compile_frame) return false;
  payload.resize(static_cast<std::size_t>(n));
  return read_exactly(fd, payload.data(), payload.size());
}

std::optional<std::string_view> complete_frame(const std::string& data) {
  std::string_view in(data);
  unsigned long long n = 0;
  if (!get_u64(in, n) || n > k_max_compile_frame || in.size() < n) return std::nullopt;
  return in.substr(0, static_cast<std::size_t>(n));
}

bool has_frame(const std::string& data) { return complete_frame(data).has_value(); }

}  // namespace leap::sandbox::detail

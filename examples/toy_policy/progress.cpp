// SPDX-License-Identifier: Apache-2.0
#include "progress.hpp"

namespace toy {

namespace {
// A log line at most this often: enough to see progress in CI, few enough to read.
constexpr std::chrono::seconds log_interval{5};
}  // namespace

Progress::Progress(std::FILE* out, bool terminal, std::size_t total)
    : out_(out), terminal_(terminal), total_(total), started_(std::chrono::steady_clock::now()), last_line_(started_) {}

void Progress::update(std::size_t done) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - started_).count();
  if (terminal_) {
    // Trailing spaces cover a longer previous line; "\r" keeps it one line.
    std::fprintf(out_, "\rtoy_policy: %zu/%zu runs done, %.0f s   ", done, total_, elapsed);
    std::fflush(out_);
  } else if (done != last_done_ && now - last_line_ >= log_interval) {
    std::fprintf(out_, "toy_policy: %zu/%zu runs done, %.0f s\n", done, total_, elapsed);
    last_line_ = now;
    last_done_ = done;
  }
}

void Progress::finish() {
  // "\r" then clear to the end of the line (ANSI EL): the live line disappears.
  if (terminal_) std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
}

}  // namespace toy

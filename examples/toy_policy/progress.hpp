// SPDX-License-Identifier: Apache-2.0
// How far a long run has got, on stderr, for a person watching it. On a terminal: one line rewritten
// in place and erased at the end, so that the screen the program ends with holds only its answer (it
// says how long the work took). To a pipe or a file: a line every few seconds at most, so a log stays
// short and shows the run was alive.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>

namespace toy {

class Progress {
 public:
  Progress(std::FILE* out, bool terminal, std::size_t total);

  // Called as often as convenient; prints only when a line is due.
  void update(std::size_t done);

  // Erases the live line (terminal); prints nothing else.
  void finish();

 private:
  std::FILE* out_;
  bool terminal_;
  std::size_t total_;
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_line_;
  std::size_t last_done_ = 0;
};

}  // namespace toy

// SPDX-License-Identifier: Apache-2.0
// A batch queued behind one compile process: its later jobs wait longer than their own CPU limit,
// and none is charged for the wait (the limit is the compile's own CPU time). Used for the one-shot
// child and the pooled compiler alike.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <leap/sandbox/compiler.hpp>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace leap_test {

inline void check_queue_time_not_charged(leap::sandbox::Compiler& c, int jobs) {
  namespace sb = leap::sandbox;
  using Clock = std::chrono::steady_clock;
  double single = 0.0;
  for (int i = 0; i < 2; ++i) {
    single = std::max(
        single, c.compile(sb::CompileJob{std::string(plain_kernel()) + "// " + std::to_string(i), {}, {}, "kernel.cu"})
                    .cpu_seconds);
  }
  const auto limit = std::chrono::milliseconds(std::max<long long>(300, static_cast<long long>(single * 4000)));
  // The batch must outlast the limit for the test to say anything. A machine whose compiles are much
  // faster than the two measured above would finish the first batch early: the batch then doubles
  // (fresh sources, so no cache answers), and only a batch that never outlasts the limit fails.
  int size = jobs;
  for (int attempt = 0;; ++attempt) {
    std::vector<sb::CompileJob> batch;
    for (int i = 0; i < size; ++i) {
      sb::CompileJob j;
      j.source = std::string(plain_kernel()) + "__global__ void q" + std::to_string(attempt) + "_" + std::to_string(i) +
                 "(int* y) { y[0] = " + std::to_string(i) + "; }\n";
      j.options.timeout = limit;
      batch.push_back(std::move(j));
    }
    const auto t0 = Clock::now();
    const std::vector<sb::CompileResult> results = c.compile_batch(batch);
    const auto waited = Clock::now() - t0;
    INFO("limit " << limit.count() << " ms, a batch of " << size << " took "
                  << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count() << " ms");
    for (const sb::CompileResult& r : results) {
      CHECK(r.ok());
      CHECK(r.limit == sb::CompileLimit::none);
      CHECK(r.cpu_seconds > 0.0);
      CHECK(r.cpu_seconds < std::chrono::duration<double>(limit).count());
    }
    if (waited > limit) return;  // the last jobs were queued for longer than their limit
    if (attempt == 3) FAIL("no batch waited longer than the limit, so the queue was never tested");
    size *= 2;
  }
}

}  // namespace leap_test

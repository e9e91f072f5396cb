// SPDX-License-Identifier: Apache-2.0
// A small pool of long-lived compile workers (compile_worker.hpp): one compile per worker at a time,
// the most recently used idle worker first (its PCHs are the warmest), workers started on demand up to
// the pool's size and replaced after a kill, a limit, a crash, a full PCH directory or a fixed number
// of compiles.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "compile/compile_worker.hpp"
#include "leap/sandbox/compiler.hpp"

namespace leap::sandbox::detail {

class CompilePool {
 public:
  // Workers are forked by `launcher` (made over `setup`), which must outlive the pool.
  CompilePool(CompileLauncher& launcher, const ChildSetup& setup, const CompilePoolSettings& settings);
  ~CompilePool();

  // Waits for a free worker (not charged to the compile), then compiles on it.
  CompileResult compile(const NvrtcRequest& request, ChildBudget budget);
  CompilePoolStats stats() const;

 private:
  std::unique_ptr<CompileWorker> take();
  void give_back(std::unique_ptr<CompileWorker> worker, const CompileWorker::Outcome& outcome);

  CompileLauncher& launcher_;
  const ChildSetup& setup_;
  CompilePoolSettings settings_;
  std::uint64_t pch_heap_bytes_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable free_;
  std::vector<std::unique_ptr<CompileWorker>> idle_;
  std::vector<int> busy_pids_;
  unsigned live_ = 0;  // idle + busy
  CompilePoolStats stats_;
};

}  // namespace leap::sandbox::detail

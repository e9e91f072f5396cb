// SPDX-License-Identifier: Apache-2.0
// A small pool of long-lived pooled compilers (pooled_compiler.hpp): one compile per process at a time,
// the most recently used idle process first (its PCHs are the warmest), processes started on demand up to
// the pool's size and replaced after a kill, a limit, a crash, a full PCH directory or a fixed number
// of compiles.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "compile/pooled_compiler.hpp"
#include "leap/sandbox/compiler.hpp"

namespace leap::sandbox::detail {

class CompilePool {
 public:
  // Processes are forked by `launcher` (made over `setup`), which must outlive the pool.
  CompilePool(CompileLauncher& launcher, const ChildSetup& setup, const CompilePoolSettings& settings);
  ~CompilePool();

  // Waits for a free process (not charged to the compile), then compiles on it.
  CompileResult compile(const NvrtcRequest& request, ChildBudget budget);
  CompilePoolStats stats() const;

 private:
  std::unique_ptr<PooledCompiler> take();
  void give_back(std::unique_ptr<PooledCompiler> process, const PooledCompiler::Outcome& outcome);

  CompileLauncher& launcher_;
  const ChildSetup& setup_;
  CompilePoolSettings settings_;
  std::uint64_t pch_heap_bytes_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable free_;
  std::vector<std::unique_ptr<PooledCompiler>> idle_;
  std::vector<int> busy_pids_;
  unsigned live_ = 0;  // idle + busy
  CompilePoolStats stats_;
};

}  // namespace leap::sandbox::detail

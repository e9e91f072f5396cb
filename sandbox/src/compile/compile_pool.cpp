// SPDX-License-Identifier: Apache-2.0
#include "compile/compile_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace leap::sandbox::detail {

CompilePool::CompilePool(CompileLauncher& launcher, const ChildSetup& setup, const CompilePoolSettings& settings)
    : launcher_(launcher), setup_(setup), settings_(settings) {
  settings_.size = std::max(settings_.size, 1u);
  settings_.max_compiles_per_process = std::max(settings_.max_compiles_per_process, 1u);
  pch_heap_bytes_ = nvrtc_pch_heap_bytes();
}

CompilePool::~CompilePool() = default;

std::unique_ptr<PooledCompiler> CompilePool::take() {
  std::unique_lock lock(mutex_);
  for (;;) {
    free_.wait(lock, [&] { return !idle_.empty() || live_ < settings_.size; });
    if (idle_.empty()) break;
    std::unique_ptr<PooledCompiler> w = std::move(idle_.back());
    idle_.pop_back();
    if (w->idle_and_alive()) {
      busy_pids_.push_back(w->pid());
      return w;
    }
    // It died between compiles: it is replaced like a process that died in one, and its place is free.
    ++stats_.processes_replaced;
    --live_;
    free_.notify_one();
    lock.unlock();
    w.reset();  // reaped, its scratch directory removed: outside the lock
    lock.lock();
  }
  ++live_;
  lock.unlock();
  try {
    auto w = std::make_unique<PooledCompiler>(
        launcher_, setup_,
        PooledCompilerSettings{settings_.pch, settings_.pch_scratch_bytes, settings_.pch ? pch_heap_bytes_ : 0, {}});
    lock.lock();
    ++stats_.processes_started;
    busy_pids_.push_back(w->pid());
    return w;
  } catch (...) {
    lock.lock();
    --live_;
    free_.notify_one();
    throw;
  }
}

void CompilePool::give_back(std::unique_ptr<PooledCompiler> process, const PooledCompiler::Outcome& outcome) {
  const bool retire = !outcome.alive || process->compiles() >= settings_.max_compiles_per_process ||
                      outcome.scratch_used > settings_.pch_scratch_bytes / 4 * 3;
  std::unique_ptr<PooledCompiler> retired;
  {
    std::lock_guard lock(mutex_);
    ++stats_.compiles;
    if (outcome.result.pch == PchUse::hit) ++stats_.pch_hits;
    if (outcome.result.pch == PchUse::created) ++stats_.pch_created;
    busy_pids_.erase(std::find(busy_pids_.begin(), busy_pids_.end(), process->pid()));
    if (retire) {
      ++stats_.processes_replaced;
      --live_;
      retired = std::move(process);
    } else {
      idle_.push_back(std::move(process));
    }
    free_.notify_one();
  }
  // `retired` is killed and reaped here, outside the lock; its replacement starts on the next take().
}

CompileResult CompilePool::compile(const NvrtcRequest& request, ChildBudget budget) {
  // A pooled compiler that died with a lost launcher (replaced meanwhile, which kills its children)
  // says nothing about the candidate: the compile is done again on a fresh one, once.
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<PooledCompiler> process = take();
    PooledCompiler::Outcome outcome;
    try {
      outcome = process->compile(request, budget);
    } catch (...) {
      outcome.alive = false;
      give_back(std::move(process), outcome);
      throw;
    }
    give_back(std::move(process), outcome);
    if (!outcome.launcher_lost) return std::move(outcome.result);
    if (attempt == 1) {
      throw std::runtime_error(
          "leap::sandbox: the compile launcher was lost twice while a pooled compiler was compiling (gone, stopped "
          "or deadlocked; replaced each time): an environment failure, not the candidate's");
    }
  }
}

CompilePoolStats CompilePool::stats() const {
  std::lock_guard lock(mutex_);
  CompilePoolStats s = stats_;
  for (const auto& w : idle_) s.pids.push_back(w->pid());
  s.pids.insert(s.pids.end(), busy_pids_.begin(), busy_pids_.end());
  return s;
}

}  // namespace leap::sandbox::detail

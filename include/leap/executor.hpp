// SPDX-License-Identifier: Apache-2.0
// Executors: how the rollout loop runs independent evaluations. An executor provides
//   void for_each_index(std::size_t n, Fn&& fn)
// which calls fn(i) once for every i in [0, n), possibly concurrently, and returns when all calls have
// finished. If a call throws, the others still run and the first exception is rethrown at the end.
// Results must never depend on which executor ran them: the rollout loop gives every call its own
// output slot and reduces in index order.
#pragma once

#include <atomic>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "leap/detail/error.hpp"

namespace leap {

namespace detail {
struct IndexProbe {
  void operator()(std::size_t) const noexcept {}
};
}  // namespace detail

template <class Executor>
concept index_executor = requires(Executor& executor, std::size_t n, detail::IndexProbe fn) {
  executor.for_each_index(n, fn);
};

// Runs every call on the calling thread, in index order. Use it for debugging and for environments
// that are not thread-safe.
struct InlineExecutor {
  template <class Fn>
  void for_each_index(std::size_t n, Fn&& fn) {
    std::exception_ptr first_error;
    for (std::size_t i = 0; i < n; ++i) {
      try {
        fn(i);
      } catch (...) {
        if (!first_error) first_error = std::current_exception();
      }
    }
    if (first_error) std::rethrow_exception(first_error);
  }
};

// A fixed set of worker threads; the calling thread works too, so ThreadPool(1) adds one thread to the
// caller. Indices are handed out one at a time from a shared counter, so a slow evaluation (a 30 ms
// compile next to a 1 ms one) never leaves a thread idle while work remains. One for_each_index runs
// at a time; concurrent callers wait their turn, and a call made from inside a job runs inline.
class ThreadPool {
 public:
  explicit ThreadPool(unsigned worker_threads) {
    if (worker_threads < 1) {
      detail::throw_invalid_argument("leap::ThreadPool: worker_threads (", worker_threads,
                                     ") must be >= 1; use InlineExecutor for none");
    }
    workers_.reserve(worker_threads);
    for (unsigned i = 0; i < worker_threads; ++i) workers_.emplace_back([this] { work_loop(); });
  }

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& worker : workers_) worker.join();
  }

  std::size_t worker_count() const noexcept { return workers_.size(); }

  template <class Fn>
  void for_each_index(std::size_t n, Fn&& fn) {
    if (n == 0) return;
    if (inside_job()) {  // a nested call would wait for workers that are busy running its caller
      InlineExecutor{}.for_each_index(n, fn);
      return;
    }
    std::lock_guard one_job_at_a_time(submit_mutex_);
    Job job;
    job.count = n;
    job.context = const_cast<void*>(static_cast<const void*>(std::addressof(fn)));
    job.run = [](void* context, std::size_t i) { (*static_cast<std::remove_reference_t<Fn>*>(context))(i); };
    {
      std::lock_guard lock(mutex_);
      current_ = &job;
      ++generation_;
    }
    wake_.notify_all();
    run_indices(job);
    std::unique_lock lock(mutex_);
    // Workers register under the lock before touching the job; once none is registered and the job is
    // withdrawn under that same lock, no thread can reach it again.
    finished_.wait(lock, [&] { return job.users == 0; });
    current_ = nullptr;
    lock.unlock();
    if (job.error) std::rethrow_exception(job.error);
  }

 private:
  struct Job {
    std::size_t count = 0;
    std::atomic<std::size_t> next{0};
    void* context = nullptr;
    void (*run)(void*, std::size_t) = nullptr;
    int users = 0;  // workers inside run_indices; guarded by mutex_
    std::mutex error_mutex;
    std::exception_ptr error;
  };

  static bool& inside_job() noexcept {
    thread_local bool inside = false;
    return inside;
  }

  static void run_indices(Job& job) {
    inside_job() = true;
    for (std::size_t i = job.next.fetch_add(1, std::memory_order_relaxed); i < job.count;
         i = job.next.fetch_add(1, std::memory_order_relaxed)) {
      try {
        job.run(job.context, i);
      } catch (...) {
        std::lock_guard lock(job.error_mutex);
        if (!job.error) job.error = std::current_exception();
      }
    }
    inside_job() = false;
  }

  void work_loop() {
    std::uint64_t seen = 0;
    std::unique_lock lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      Job* job = current_;
      if (job == nullptr) continue;
      ++job->users;
      lock.unlock();
      run_indices(*job);
      lock.lock();
      if (--job->users == 0) finished_.notify_all();
    }
  }

  std::mutex submit_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  Job* current_ = nullptr;
  std::uint64_t generation_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace leap

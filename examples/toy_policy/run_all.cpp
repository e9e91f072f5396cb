// SPDX-License-Identifier: Apache-2.0
#include "run_all.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "progress.hpp"

namespace toy {

std::vector<RunKey> every_run(const Options& options, std::size_t variant_count) {
  std::vector<RunKey> keys;
  for (std::size_t mix = 0; mix < options.mixes.size(); ++mix) {
    for (std::size_t v = 0; v < variant_count; ++v) {
      for (std::size_t r = 0; r < options.learning_rates.size(); ++r) {
        for (std::size_t s = 0; s < options.seeds.size(); ++s) keys.push_back({mix, v, r, s});
      }
    }
  }
  return keys;
}

unsigned thread_count(const Options& options, std::size_t runs) {
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(
      std::min<std::size_t>(options.threads > 0 ? static_cast<unsigned>(options.threads) : hardware, runs));
}

std::vector<RunResult> run_all(const Options& options, const std::vector<RunKey>& keys,
                               const std::vector<std::vector<std::vector<Task>>>& tasks,
                               const std::vector<Variant>& variants, unsigned threads) {
  std::vector<RunResult> results(keys.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  const auto work = [&] {
    for (std::size_t job = next++; job < keys.size(); job = next++) {
      const RunKey& key = keys[job];
      results[job] = run_one(options, tasks[key.mix][key.seed], options.seeds[key.seed], variants[key.variant],
                             options.learning_rates[key.rate]);
      ++done;
    }
  };
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) workers.emplace_back(work);

  Progress progress(stderr, ::isatty(2) != 0, keys.size());
  while (done.load() < keys.size()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    progress.update(done.load());
  }
  for (std::thread& worker : workers) worker.join();
  progress.finish();
  return results;
}

}  // namespace toy

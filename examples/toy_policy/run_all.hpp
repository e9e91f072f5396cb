// SPDX-License-Identifier: Apache-2.0
// Every run of a study, spread over threads: each run alone on one thread, so the results are the
// same for any thread count.
#pragma once

#include <cstddef>
#include <vector>

#include "options.hpp"
#include "runner.hpp"
#include "simulated_kernel_env.hpp"
#include "variants.hpp"

namespace toy {

struct RunKey {
  std::size_t mix = 0;
  std::size_t variant = 0;
  std::size_t rate = 0;
  std::size_t seed = 0;
};

// Every (mix, variant, learning rate, seed), in that nesting order.
std::vector<RunKey> every_run(const Options& options, std::size_t variant_count);

// --threads, or one per hardware thread; never more than there are runs.
unsigned thread_count(const Options& options, std::size_t runs);

// results[i] is the run of keys[i]; tasks[mix][seed] are that seed's tasks. Progress on stderr.
std::vector<RunResult> run_all(const Options& options, const std::vector<RunKey>& keys,
                               const std::vector<std::vector<std::vector<Task>>>& tasks,
                               const std::vector<Variant>& variants, unsigned threads);

}  // namespace toy

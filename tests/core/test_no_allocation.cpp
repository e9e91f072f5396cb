// SPDX-License-Identifier: Apache-2.0
// The batched advantage functions allocate nothing after the first call of a given size. This test
// program replaces the global operator new, so it counts every heap allocation the library makes
// (and the standard library on its behalf) between two points; Catch2's own allocations fall
// outside them.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

#include "leap/advantage_normalization.hpp"
#include "leap/baselines.hpp"
#include "leap/rank_advantage.hpp"
#include "leap/rank_advantage_of_scores.hpp"
#include "leap/turn_credit.hpp"

namespace {
std::atomic<bool> counting{false};
std::atomic<std::size_t> allocations{0};

void* counted(std::size_t size, std::size_t alignment) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (size == 0) size = 1;
  void* p = alignment > alignof(std::max_align_t)
                ? std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment)
                : std::malloc(size);
  return p;
}
}  // namespace

void* operator new(std::size_t size) {
  if (void* p = counted(size, 0)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = counted(size, 0)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  if (void* p = counted(size, static_cast<std::size_t>(alignment))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  if (void* p = counted(size, static_cast<std::size_t>(alignment))) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted(size, 0); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted(size, 0); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

template <class Fn>
std::size_t allocations_in(Fn&& fn) {
  allocations.store(0);
  counting.store(true);
  fn();
  counting.store(false);
  return allocations.load();
}

struct Batch {
  std::vector<leap::Outcome> results;
  std::vector<std::uint32_t> group_ids;
  std::vector<double> rewards;
  std::vector<float> rewards_float;
  std::vector<double> out;
  std::vector<float> out_float;
};

// n results in groups of g; shuffled: members of a group scattered over the batch.
Batch make_batch(std::size_t n, std::size_t g, bool shuffled, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Batch batch;
  batch.results.resize(n);
  batch.group_ids.resize(n);
  batch.rewards.resize(n);
  batch.rewards_float.resize(n);
  batch.out.resize(n);
  batch.out_float.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    leap::Outcome& o = batch.results[i];
    o.solved_turn = std::uniform_int_distribution<int>(0, 3)(rng);
    o.best_verdict = o.solved_turn > 0 ? leap::Verdict::correct : leap::Verdict::wrong_answer;
    o.speedup = std::uniform_real_distribution<double>(0.5, 2.0)(rng);
    o.tokens = std::uniform_int_distribution<std::uint32_t>(100, 900)(rng);
    batch.group_ids[i] = static_cast<std::uint32_t>(i / g);
    batch.rewards[i] = o.solved_turn > 0 ? 1.0 : 0.0;
    batch.rewards_float[i] = static_cast<float>(batch.rewards[i]);
  }
  if (shuffled) std::shuffle(batch.group_ids.begin(), batch.group_ids.end(), rng);
  return batch;
}

leap::KernelOrder turn_weighted() {
  leap::KernelOrder order;
  order.turn_weight = 0.5;
  return order;
}

// Every batched path once, through the per-thread workspace.
void every_path(Batch& b) {
  leap::rank_advantages(b.results, b.group_ids, std::span<double>(b.out));
  leap::rank_advantages(b.results, b.group_ids, std::span<float>(b.out_float));
  leap::rank_advantages(b.results, b.group_ids, std::span<double>(b.out), leap::KernelOrder::with_speedup_and_tokens());
  leap::rank_advantages(b.results, b.group_ids, std::span<double>(b.out), turn_weighted());
  leap::grpo_advantages(b.rewards, b.group_ids, b.out);
  leap::grpo_advantages(b.rewards_float, b.group_ids, b.out_float);
  leap::rloo_advantages(b.rewards, b.group_ids, b.out);
  leap::rloo_advantages(b.rewards_float, b.group_ids, b.out_float);
  leap::rank_advantages_of_scores(b.rewards, b.group_ids, b.out);
  leap::normalize_advantages(b.out, b.group_ids, leap::AdvantageNormalization::group_std);
}

// The same in a workspace the caller keeps.
void every_path(Batch& b, leap::AdvantageWorkspace& ws) {
  leap::rank_advantages(b.results, b.group_ids, std::span<double>(b.out), leap::KernelOrder{}, ws);
  leap::rank_advantages(b.results, b.group_ids, std::span<float>(b.out_float), leap::KernelOrder{}, ws);
  leap::rank_advantages(b.results, b.group_ids, std::span<double>(b.out), leap::KernelOrder::with_speedup_and_tokens(),
                        ws);
  leap::rank_advantages(b.results, b.group_ids, std::span<double>(b.out), turn_weighted(), ws);
  leap::grpo_advantages(b.rewards, b.group_ids, b.out, {}, ws);
  leap::grpo_advantages(b.rewards_float, b.group_ids, b.out_float, {}, ws);
  leap::rloo_advantages(b.rewards, b.group_ids, b.out, ws);
  leap::rloo_advantages(b.rewards_float, b.group_ids, b.out_float, ws);
  leap::rank_advantages_of_scores(b.rewards, b.group_ids, b.out, 0.0, ws);
  leap::normalize_advantages(b.out, b.group_ids, leap::AdvantageNormalization::group_std, 1e-6, ws);
}

}  // namespace

TEST_CASE("the counting allocator sees allocations", "[allocation]") {
  // Guards the test itself: a replacement that is not linked in would make every check below vacuous.
  std::vector<int>* v = nullptr;
  CHECK(allocations_in([&] { v = new std::vector<int>(100); }) == 2);
  delete v;
}

TEST_CASE("contiguous groups up to 16: no allocation even on the first call", "[allocation]") {
  leap::thread_advantage_workspace().release();
  for (std::size_t g : {2u, 8u, 16u}) {
    Batch batch = make_batch(4096, g, false, g);
    CHECK(allocations_in([&] { every_path(batch); }) == 0);
    leap::AdvantageWorkspace ws;
    CHECK(allocations_in([&] { every_path(batch, ws); }) == 0);
  }
}

TEST_CASE("after the first call of a size, no path allocates", "[allocation]") {
  struct Case {
    std::size_t group_size;
    bool shuffled;
  };
  // Large groups (pairwise and sorted ranking paths) and scattered members (the index and gathering).
  for (const Case c : {Case{64, false}, Case{300, false}, Case{8, true}, Case{300, true}}) {
    CAPTURE(c.group_size, c.shuffled);
    Batch batch = make_batch(6000, c.group_size, c.shuffled, 7 + c.group_size);
    every_path(batch);  // the first call may size the buffers
    CHECK(allocations_in([&] { every_path(batch); }) == 0);

    leap::AdvantageWorkspace ws;
    every_path(batch, ws);
    CHECK(allocations_in([&] { every_path(batch, ws); }) == 0);

    // A smaller batch fits in what the workspace already holds.
    Batch smaller = make_batch(3000, c.group_size, c.shuffled, 99);
    CHECK(allocations_in([&] { every_path(smaller, ws); }) == 0);
    CHECK(allocations_in([&] { every_path(smaller); }) == 0);
  }
}

TEST_CASE("batched turn credit allocates nothing", "[allocation]") {
  const std::vector<double> advantages = {0.5, -0.25, 1.0, 0.0};
  const std::vector<int> num_turns = {3, 2, 1, 4};
  const std::vector<int> solved_turns = {2, 0, 1, 3};
  std::vector<double> out(10);
  CHECK(allocations_in([&] { leap::turn_advantages(advantages, num_turns, solved_turns, 0.5, out); }) == 0);
  CHECK(out == std::vector<double>{0.25, 0.5, 0.0, -0.25, -0.25, 1.0, 0.0, 0.0, 0.0, 0.0});
}

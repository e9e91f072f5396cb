// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <thread>
#include <vector>

#include "leap/executor.hpp"

using Catch::Matchers::Contains;

static_assert(leap::index_executor<leap::InlineExecutor> && leap::index_executor<leap::ThreadPool>);

TEST_CASE("the inline executor runs every index in order", "[executor]") {
  std::vector<std::size_t> order;
  leap::InlineExecutor{}.for_each_index(5, [&](std::size_t i) { order.push_back(i); });
  CHECK(order == std::vector<std::size_t>{0, 1, 2, 3, 4});
}

TEST_CASE("the thread pool runs every index exactly once", "[executor][threads]") {
  leap::ThreadPool pool(3);
  CHECK(pool.worker_count() == 3);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{5000}}) {
    std::vector<std::atomic<int>> hits(n);
    pool.for_each_index(n, [&](std::size_t i) { hits[i].fetch_add(1); });
    bool once = true;
    for (const auto& hit : hits) once = once && hit.load() == 1;
    CHECK(once);
  }
}

TEST_CASE("the thread pool finishes the job, then rethrows the first exception", "[executor][threads]") {
  leap::ThreadPool pool(2);
  std::atomic<int> ran{0};
  CHECK_THROWS_WITH(pool.for_each_index(100,
                                        [&](std::size_t i) {
                                          ++ran;
                                          if (i == 10) throw std::runtime_error("index 10 failed");
                                        }),
                    Contains("index 10 failed"));
  CHECK(ran.load() == 100);
  std::atomic<int> after{0};
  pool.for_each_index(10, [&](std::size_t) { ++after; });  // still usable
  CHECK(after.load() == 10);
}

TEST_CASE("nested and concurrent calls neither deadlock nor lose work", "[executor][threads]") {
  leap::ThreadPool pool(2);
  std::atomic<int> inner{0};
  pool.for_each_index(4, [&](std::size_t) { pool.for_each_index(5, [&](std::size_t) { ++inner; }); });
  CHECK(inner.load() == 20);

  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 20; ++round) pool.for_each_index(50, [&](std::size_t) { ++total; });
    });
  }
  for (auto& caller : callers) caller.join();
  CHECK(total.load() == 3 * 20 * 50);
  CHECK_THROWS_WITH(leap::ThreadPool(0), Contains("worker_threads (0) must be >= 1"));
}

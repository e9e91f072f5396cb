// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "leap/baselines.hpp"
#include "leap/group_buffer.hpp"
#include "leap/rank_advantage.hpp"

using Catch::Matchers::Contains;
using leap::GroupKey;
using Kind = leap::group_buffer_error::Kind;

namespace {

leap::Outcome solved_at(int turn) {
  leap::Outcome outcome;
  outcome.solved_turn = turn;
  outcome.best_verdict = turn > 0 ? leap::Verdict::correct : leap::Verdict::wrong_answer;
  return outcome;
}

template <class Fn>
Kind error_kind(Fn&& fn) {
  try {
    fn();
  } catch (const leap::group_buffer_error& error) {
    return error.kind();
  }
  FAIL("no group_buffer_error was thrown");
  return Kind::closed;
}

}  // namespace

TEST_CASE("a group is released when its last member arrives, in member order", "[buffer]") {
  leap::GroupBuffer<std::string> buffer({.group_size = 3, .max_groups = 4});
  CHECK_FALSE(buffer.add({7, 1}, 2, solved_at(0), 0.0, "c"));
  CHECK_FALSE(buffer.add({7, 1}, 0, solved_at(1), 1.0, "a"));
  CHECK_FALSE(buffer.add({8, 1}, 0, solved_at(2), 0.5, "x"));
  CHECK(buffer.take_ready().empty());
  CHECK(buffer.add({7, 1}, 1, solved_at(2), 0.5, "b"));
  CHECK(buffer.pending_groups() == 1);
  CHECK(buffer.ready_groups() == 1);

  const auto batch = buffer.take_ready();
  REQUIRE(batch.group_count() == 1);
  CHECK(batch.keys[0] == GroupKey{7, 1});
  CHECK(batch.size() == 3);
  CHECK(std::vector<int>(batch.members().begin(), batch.members().end()) == std::vector<int>{0, 1, 2});
  CHECK(std::vector<double>(batch.rewards().begin(), batch.rewards().end()) == std::vector<double>{1.0, 0.5, 0.0});
  CHECK(std::vector<std::string>(batch.extras().begin(), batch.extras().end()) ==
        std::vector<std::string>{"a", "b", "c"});
  CHECK(batch.group_outcomes(0)[2] == solved_at(0));
  CHECK(buffer.ready_groups() == 0);
  CHECK(buffer.accepted_members() == 4);
}

TEST_CASE("released batches feed rank_advantages and the baselines without copies", "[buffer]") {
  leap::GroupBuffer<> buffer({.group_size = 4, .max_groups = 8});
  const std::vector<int> turns_a = {1, 0, 2, 1};
  const std::vector<int> turns_b = {0, 0, 3, 0};
  for (int m = 3; m >= 0; --m) {
    buffer.add({1, 1}, m, solved_at(turns_a[static_cast<std::size_t>(m)]),
               turns_a[static_cast<std::size_t>(m)] > 0 ? 1.0 : 0.0);
    buffer.add({2, 1}, m, solved_at(turns_b[static_cast<std::size_t>(m)]),
               turns_b[static_cast<std::size_t>(m)] > 0 ? 1.0 : 0.0);
  }
  const auto batch = buffer.take_ready();
  REQUIRE(batch.group_count() == 2);
  std::vector<double> advantages(batch.size());
  leap::rank_advantages(batch.outcomes(), batch.group_ids(), std::span<double>(advantages));
  for (std::size_t g = 0; g < 2; ++g) {
    const auto expected = leap::rank_advantages(batch.group_outcomes(g));
    for (std::size_t i = 0; i < 4; ++i) CHECK(advantages[batch.offsets[g] + i] == expected[i]);
  }
  std::vector<double> grpo(batch.size());
  leap::grpo_advantages(batch.rewards(), batch.group_ids(), std::span<double>(grpo));
  CHECK(grpo[batch.offsets[1] + 2] > 0.0);                      // the only success of task 2
  CHECK(batch.outcomes().data() == batch.outcome_data.data());  // a view, not a copy
}

TEST_CASE("duplicates and bad members are refused and change nothing", "[buffer][errors]") {
  leap::GroupBuffer<> buffer({.group_size = 2, .max_groups = 4});
  buffer.add({1, 1}, 0, solved_at(1));
  CHECK(error_kind([&] { buffer.add({1, 1}, 0, solved_at(1)); }) == Kind::duplicate_member);
  CHECK_THROWS_WITH(buffer.add({1, 1}, 0, solved_at(1)), Contains("member 0 of group (task 1, turn 1) arrived twice"));
  CHECK(error_kind([&] { buffer.add({1, 1}, 2, solved_at(1)); }) == Kind::member_out_of_range);
  CHECK_THROWS_WITH(buffer.add({1, 1}, -1, solved_at(1)),
                    Contains("member -1 of group (task 1, turn 1) is outside [0, 2)"));
  CHECK(buffer.accepted_members() == 1);
  buffer.add({1, 1}, 1, solved_at(0));
  CHECK(buffer.take_ready().group_count() == 1);
  // A member of a group already released would be counted twice.
  CHECK_THROWS_WITH(buffer.add({1, 1}, 1, solved_at(0)), Contains("belongs to a group already released"));
  buffer.forget_released();
  CHECK_NOTHROW(buffer.add({1, 1}, 1, solved_at(0)));
  CHECK_THROWS_WITH(leap::GroupBuffer<>({.group_size = 0}), Contains("group_size (0) must be >= 1"));
  CHECK_THROWS_WITH(leap::GroupBuffer<>({.group_size = 2, .max_groups = 0}), Contains("max_groups (0) must be >= 1"));
}

TEST_CASE("a full buffer throws under throw_error, but open groups still take members", "[buffer]") {
  leap::GroupBuffer<> buffer({.group_size = 2, .max_groups = 2, .when_full = leap::WhenFull::throw_error});
  buffer.add({1, 1}, 0, solved_at(1));
  buffer.add({2, 1}, 0, solved_at(1));
  CHECK(error_kind([&] { buffer.add({3, 1}, 0, solved_at(1)); }) == Kind::full);
  CHECK_THROWS_WITH(buffer.add({3, 1}, 0, solved_at(1)), Contains("beyond max_groups (2)"));
  CHECK(buffer.add({1, 1}, 1, solved_at(1)));                                     // completes an open group
  CHECK(error_kind([&] { buffer.add({3, 1}, 0, solved_at(1)); }) == Kind::full);  // ready but not taken: still held
  CHECK(buffer.take_ready().group_count() == 1);
  CHECK_NOTHROW(buffer.add({3, 1}, 0, solved_at(1)));
}

TEST_CASE("a full buffer blocks a new group until the consumer takes one", "[buffer][threads]") {
  leap::GroupBuffer<> buffer({.group_size = 1, .max_groups = 1});
  buffer.add({1, 1}, 0, solved_at(1));  // complete, held until taken
  std::atomic<bool> added{false};
  std::thread producer([&] {
    buffer.add({2, 1}, 0, solved_at(1));
    added = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK_FALSE(added.load());
  CHECK(buffer.take_ready().keys == std::vector<GroupKey>{{1, 1}});
  producer.join();
  CHECK(added.load());
  CHECK(buffer.take_ready().keys == std::vector<GroupKey>{{2, 1}});
}

TEST_CASE("close wakes blocked producers with an error and consumers with what is ready", "[buffer][threads]") {
  leap::GroupBuffer<> buffer({.group_size = 2, .max_groups = 1});
  buffer.add({1, 1}, 0, solved_at(1));
  std::atomic<int> kind{-1};
  std::thread producer([&] {
    try {
      buffer.add({2, 1}, 0, solved_at(1));
    } catch (const leap::group_buffer_error& error) {
      kind = static_cast<int>(error.kind());
    }
  });
  std::thread consumer([&] { CHECK(buffer.wait_ready(5).empty()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  buffer.close();
  producer.join();
  consumer.join();
  CHECK(kind.load() == static_cast<int>(Kind::closed));
  CHECK(buffer.closed());
  CHECK(error_kind([&] { buffer.add({1, 1}, 1, solved_at(1)); }) == Kind::closed);
}

TEST_CASE("drain returns complete groups and reports what incomplete ones miss", "[buffer]") {
  leap::GroupBuffer<int> buffer({.group_size = 3, .max_groups = 8});
  for (int m = 0; m < 3; ++m) buffer.add({1, 1}, m, solved_at(1), 1.0, 10 + m);
  buffer.add({2, 2}, 1, solved_at(0), 0.0, 21);
  buffer.add({0, 1}, 0, solved_at(0), 0.0, 0);
  buffer.add({0, 1}, 2, solved_at(2), 0.5, 2);
  const auto drained = buffer.drain();
  CHECK(drained.complete.keys == std::vector<GroupKey>{{1, 1}});
  CHECK(drained.complete.size() == 3);
  REQUIRE(drained.partial.keys == std::vector<GroupKey>{{0, 1}, {2, 2}});
  CHECK(drained.missing == std::vector<std::vector<int>>{{1}, {0, 2}});
  CHECK(std::vector<int>(drained.partial.extras().begin(), drained.partial.extras().end()) ==
        std::vector<int>{0, 2, 21});
  CHECK(drained.partial.group_size(0) == 2);
  CHECK(drained.partial.group_size(1) == 1);
  CHECK(drained.complete.size() + drained.partial.size() == buffer.accepted_members());
  CHECK(buffer.pending_groups() == 0);
}

namespace {

struct Collected {
  std::map<GroupKey, int> times_seen;
  std::size_t members = 0;
  bool intact = true;
};

std::uint32_t tag_of(GroupKey key, int member) {
  return static_cast<std::uint32_t>((static_cast<int>(key.task) * 10 + key.turn) * 100 + member);
}

// Takes groups as they are released until `groups` have come out, checking each member on the way.
void consume(leap::GroupBuffer<std::uint32_t>& buffer, std::size_t groups, Collected& out) {
  while (out.times_seen.size() < groups) {
    const auto batch = buffer.wait_ready(1, 5);
    for (std::size_t g = 0; g < batch.group_count(); ++g) {
      ++out.times_seen[batch.keys[g]];
      for (std::size_t i = batch.offsets[g]; i < batch.offsets[g + 1]; ++i) {
        const int member = batch.member_data[i];
        out.intact = out.intact && batch.extra_data[i] == tag_of(batch.keys[g], member) &&
                     batch.reward_data[i] == member * 0.25 && batch.group_id_data[i] == g &&
                     member == static_cast<int>(i - batch.offsets[g]);
      }
      out.members += batch.group_size(g);
    }
  }
}

void check_collected(const Collected& collected, leap::GroupBuffer<std::uint32_t>& buffer, std::size_t groups,
                     int group_size) {
  CHECK(collected.intact);
  CHECK(collected.times_seen.size() == groups);
  CHECK(collected.members == groups * static_cast<std::size_t>(group_size));
  CHECK(buffer.accepted_members() == collected.members);
  bool each_once = true;
  for (const auto& [key, count] : collected.times_seen) each_once = each_once && count == 1;
  CHECK(each_once);
  const auto rest = buffer.drain();
  CHECK(rest.complete.empty());
  CHECK(rest.partial.empty());
}

}  // namespace

TEST_CASE("many producers sharing every group: each released once, complete and intact", "[buffer][threads]") {
  constexpr int producers = 8;
  constexpr int tasks = 100;
  constexpr int turns = 2;
  constexpr int group_size = 8;
  constexpr std::size_t groups = tasks * turns;
  // Every producer adds one member of every group, so producers may drift far apart: capacity for all
  // groups in flight (see the deadlock note in group_buffer.hpp).
  leap::GroupBuffer<std::uint32_t> buffer({.group_size = group_size, .max_groups = groups});
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (int task = 0; task < tasks; ++task) {
        for (int turn = 1; turn <= turns; ++turn) {
          const int member = (p + task + turn) % group_size;
          const GroupKey key{static_cast<std::uint64_t>(task), turn};
          buffer.add(key, member, solved_at(member % 3), member * 0.25, tag_of(key, member));
        }
      }
    });
  }
  Collected collected;
  consume(buffer, groups, collected);
  for (std::thread& thread : threads) thread.join();
  check_collected(collected, buffer, groups, group_size);
}

TEST_CASE("many producers through a small blocking buffer", "[buffer][threads]") {
  constexpr int producers = 8;
  constexpr int group_count = 400;
  constexpr int group_size = 4;
  // Each producer assembles whole groups (members in a scrambled order), so at most one incomplete group
  // per producer is open and a capacity below the producer count only makes producers wait.
  leap::GroupBuffer<std::uint32_t> buffer({.group_size = group_size, .max_groups = 3});
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&, p] {
      for (int g = p; g < group_count; g += producers) {
        const GroupKey key{static_cast<std::uint64_t>(g), 1};
        for (int k = 0; k < group_size; ++k) {
          const int member = (k * 3 + g) % group_size;
          buffer.add(key, member, solved_at(member % 3), member * 0.25, tag_of(key, member));
        }
      }
    });
  }
  Collected collected;
  consume(buffer, group_count, collected);
  for (std::thread& thread : threads) thread.join();
  check_collected(collected, buffer, group_count, group_size);
}

TEST_CASE("max_wait turns a stalled producer into an error naming the group", "[buffer][errors]") {
  leap::GroupBuffer<> buffer({.group_size = 2, .max_groups = 1, .max_wait = std::chrono::milliseconds(20)});
  buffer.add({1, 1}, 0, solved_at(1));  // open, and waiting for member 1 from this very producer
  CHECK_THROWS_WITH(buffer.add({2, 1}, 0, solved_at(1)),
                    Contains("member 0 of group (task 2, turn 1) waited 20 ms for room beyond max_groups (1)"));
  CHECK(buffer.add({1, 1}, 1, solved_at(1)));
}

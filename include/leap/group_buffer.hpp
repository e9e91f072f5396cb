// SPDX-License-Identifier: Apache-2.0
// GroupBuffer: collects evaluated turns from many concurrent producers (rollout and sandbox workers)
// and releases each group once all of its G members have arrived.
//
//   producers  add(key, member, outcome, reward, extra) from any thread; key = (task, turn), member in [0, G)
//   consumer   take_ready() / wait_ready() return complete groups as one ReleasedBatch, whose flat views
//              (outcomes(), rewards(), group_ids()) go to rank_advantages or the baselines as they are:
//              members of a group are contiguous, in member order.
//   shutdown   close() refuses further adds; drain() closes and returns everything accepted: the
//              complete groups, and the incomplete ones with the members that arrived and the ones missing.
//
// Nothing is dropped or counted twice: a second arrival of the same member, a member of a group already
// released, or a member index outside [0, G) throws group_buffer_error and changes nothing.
//
// Capacity is counted in open groups (incomplete, or complete but not yet taken). A member of an open
// group is always accepted, so producers finishing groups can never be blocked by the groups they are
// finishing; the first member of a new group waits for room (WhenFull::block) or throws (throw_error).
// A bound on open groups can still deadlock when every open group waits for a member from a producer
// that is itself waiting for room (several producers each adding one member of every group, some far
// ahead of others). Avoid it by producing a group's members close together (one worker per group, or
// dealing a group out before starting the next) with max_groups above the groups in flight; and set
// max_wait so that such a stall becomes a `full` error naming the group instead of a hang.
#pragma once

#include <algorithm>
#include <chrono>
#include <compare>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "leap/detail/error.hpp"
#include "leap/outcome.hpp"
#include "leap/trajectory.hpp"

namespace leap {

// Which group a member belongs to: one task's turn-`turn` evaluations.
struct GroupKey {
  std::uint64_t task = 0;
  int turn = 1;
  friend constexpr auto operator<=>(const GroupKey&, const GroupKey&) = default;
};

enum class WhenFull : std::uint8_t { block, throw_error };

struct GroupBufferOptions {
  int group_size = 8;             // G: members per group
  std::size_t max_groups = 1024;  // open groups held at once
  WhenFull when_full = WhenFull::block;
  std::chrono::milliseconds max_wait = std::chrono::milliseconds::max();  // block: longest wait for room
};

// What went wrong with an add(); what() names the group and member.
class group_buffer_error : public std::runtime_error {
 public:
  enum class Kind : std::uint8_t { duplicate_member, member_out_of_range, full, closed };
  group_buffer_error(Kind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  Kind kind() const noexcept { return kind_; }

 private:
  Kind kind_;
};

// Groups taken from the buffer, as flat arrays. Group g is keys()[g]; its members occupy
// [offsets[g], offsets[g + 1]) of the member arrays.
template <class Extra = NoPayload>
struct ReleasedBatch {
  std::vector<GroupKey> keys;
  std::vector<std::size_t> offsets{0};
  std::vector<Outcome> outcome_data;
  std::vector<double> reward_data;
  std::vector<std::uint32_t> group_id_data;  // g for every member of group g
  std::vector<int> member_data;              // the member index of each entry
  std::vector<Extra> extra_data;

  std::size_t group_count() const noexcept { return keys.size(); }
  std::size_t size() const noexcept { return outcome_data.size(); }
  bool empty() const noexcept { return keys.empty(); }

  std::span<const Outcome> outcomes() const noexcept { return outcome_data; }
  std::span<const double> rewards() const noexcept { return reward_data; }
  std::span<const std::uint32_t> group_ids() const noexcept { return group_id_data; }
  std::span<const int> members() const noexcept { return member_data; }
  std::span<const Extra> extras() const noexcept { return extra_data; }
  std::span<const Outcome> group_outcomes(std::size_t g) const {
    return outcomes().subspan(offsets.at(g), group_size(g));
  }
  std::span<const double> group_rewards(std::size_t g) const { return rewards().subspan(offsets.at(g), group_size(g)); }
  std::size_t group_size(std::size_t g) const { return offsets.at(g + 1) - offsets.at(g); }
};

// Everything drain() found: complete groups, and for each incomplete group its arrived members (in
// `partial`, same layout) and the member indices that never came (missing[g] for partial group g).
template <class Extra = NoPayload>
struct DrainedGroups {
  ReleasedBatch<Extra> complete;
  ReleasedBatch<Extra> partial;
  std::vector<std::vector<int>> missing;
};

template <class Extra = NoPayload>
class GroupBuffer {
 public:
  explicit GroupBuffer(GroupBufferOptions options) : options_(options) {
    if (options_.group_size < 1) {
      detail::throw_invalid_argument("leap::GroupBuffer: group_size (", options_.group_size, ") must be >= 1");
    }
    if (options_.max_groups < 1) {
      detail::throw_invalid_argument("leap::GroupBuffer: max_groups (", options_.max_groups, ") must be >= 1");
    }
  }

  GroupBuffer(const GroupBuffer&) = delete;
  GroupBuffer& operator=(const GroupBuffer&) = delete;

  const GroupBufferOptions& options() const noexcept { return options_; }

  // Adds one member. Returns true when it completed its group (which is now ready to take). Thread-safe.
  // Throws group_buffer_error for a duplicate, an out-of-range member, a closed buffer, or (throw_error
  // policy) no room for a new group.
  bool add(GroupKey key, int member, const Outcome& outcome, double reward = 0.0, Extra extra = {}) {
    if (member < 0 || member >= options_.group_size) {
      fail(group_buffer_error::Kind::member_out_of_range, key, member,
           detail::concat("is outside [0, ", options_.group_size, ")"));
    }
    std::unique_lock lock(mutex_);
    if (closed_) fail(group_buffer_error::Kind::closed, key, member, "arrived after close()");
    auto found = pending_.find(key);
    if (found == pending_.end()) {
      if (released_.contains(key)) {
        fail(group_buffer_error::Kind::duplicate_member, key, member, "belongs to a group already released");
      }
      if (open_groups() >= options_.max_groups) {
        if (options_.when_full == WhenFull::throw_error) {
          fail(group_buffer_error::Kind::full, key, member,
               detail::concat("would open a group beyond max_groups (", options_.max_groups, ")"));
        }
        const auto has_room = [&] { return closed_ || open_groups() < options_.max_groups; };
        if (options_.max_wait == std::chrono::milliseconds::max()) {
          room_.wait(lock, has_room);
        } else if (!room_.wait_for(lock, options_.max_wait, has_room)) {
          fail(group_buffer_error::Kind::full, key, member,
               detail::concat("waited ", options_.max_wait.count(), " ms for room beyond max_groups (",
                              options_.max_groups, "); are open groups waiting for members from this producer?"));
        }
        if (closed_)
          fail(group_buffer_error::Kind::closed, key, member, "was waiting for room when close() was called");
        found = pending_.find(key);  // another producer may have opened it meanwhile
      }
      if (found == pending_.end()) {
        if (released_.contains(key)) {
          fail(group_buffer_error::Kind::duplicate_member, key, member, "belongs to a group already released");
        }
        found = pending_.emplace(key, Pending(static_cast<std::size_t>(options_.group_size))).first;
      }
    }
    Pending& group = found->second;
    const auto slot = static_cast<std::size_t>(member);
    if (group.arrived[slot]) fail(group_buffer_error::Kind::duplicate_member, key, member, "arrived twice");
    group.arrived[slot] = true;
    group.outcomes[slot] = outcome;
    group.rewards[slot] = reward;
    group.extras[slot] = std::move(extra);
    ++accepted_;
    if (++group.count < options_.group_size) return false;
    ready_.push_back(Ready{key, std::move(group)});
    pending_.erase(found);
    released_.insert(key);
    lock.unlock();
    ready_signal_.notify_all();
    return true;
  }

  // Takes up to max_groups complete groups, oldest first, without waiting (maybe none).
  ReleasedBatch<Extra> take_ready(std::size_t max_groups = std::numeric_limits<std::size_t>::max()) {
    std::unique_lock lock(mutex_);
    ReleasedBatch<Extra> batch = take_locked(max_groups);
    lock.unlock();
    if (!batch.empty()) room_.notify_all();
    return batch;
  }

  // Waits until at least min_groups complete groups are ready (or the buffer is closed), then takes up
  // to max_groups of them.
  ReleasedBatch<Extra> wait_ready(std::size_t min_groups,
                                  std::size_t max_groups = std::numeric_limits<std::size_t>::max()) {
    std::unique_lock lock(mutex_);
    ready_signal_.wait(lock, [&] { return closed_ || ready_.size() >= min_groups; });
    ReleasedBatch<Extra> batch = take_locked(max_groups);
    lock.unlock();
    if (!batch.empty()) room_.notify_all();
    return batch;
  }

  // Refuses further adds; producers waiting for room throw, consumers waiting in wait_ready return.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    room_.notify_all();
    ready_signal_.notify_all();
  }

  // close() and take everything accepted: complete groups, then incomplete ones by key with what is missing.
  DrainedGroups<Extra> drain() {
    close();
    std::lock_guard lock(mutex_);
    DrainedGroups<Extra> drained;
    drained.complete = take_locked(std::numeric_limits<std::size_t>::max());
    for (auto& [key, group] : pending_) {
      std::vector<int> missing;
      for (std::size_t slot = 0; slot < group.arrived.size(); ++slot) {
        if (!group.arrived[slot]) missing.push_back(static_cast<int>(slot));
      }
      append(drained.partial, key, group);
      drained.missing.push_back(std::move(missing));
    }
    pending_.clear();
    return drained;
  }

  // Forgets which groups were released, so their keys may be used again (e.g. between training steps).
  void forget_released() {
    std::lock_guard lock(mutex_);
    released_.clear();
  }

  std::size_t pending_groups() const {
    std::lock_guard lock(mutex_);
    return pending_.size();
  }
  std::size_t ready_groups() const {
    std::lock_guard lock(mutex_);
    return ready_.size();
  }
  std::uint64_t accepted_members() const {
    std::lock_guard lock(mutex_);
    return accepted_;
  }
  bool closed() const {
    std::lock_guard lock(mutex_);
    return closed_;
  }

 private:
  struct Pending {
    explicit Pending(std::size_t size) : arrived(size, false), outcomes(size), rewards(size, 0.0), extras(size) {}
    std::vector<bool> arrived;
    std::vector<Outcome> outcomes;
    std::vector<double> rewards;
    std::vector<Extra> extras;
    int count = 0;
  };
  struct Ready {
    GroupKey key;
    Pending group;
  };

  [[noreturn]] static void fail(group_buffer_error::Kind kind, GroupKey key, int member, const std::string& what) {
    throw group_buffer_error(kind, detail::concat("leap::GroupBuffer: member ", member, " of group (task ", key.task,
                                                  ", turn ", key.turn, ") ", what));
  }

  std::size_t open_groups() const noexcept { return pending_.size() + ready_.size(); }

  // Appends the arrived members of one group, in member order.
  static void append(ReleasedBatch<Extra>& batch, const GroupKey& key, Pending& group) {
    const auto id = static_cast<std::uint32_t>(batch.keys.size());
    batch.keys.push_back(key);
    for (std::size_t slot = 0; slot < group.arrived.size(); ++slot) {
      if (!group.arrived[slot]) continue;
      batch.outcome_data.push_back(group.outcomes[slot]);
      batch.reward_data.push_back(group.rewards[slot]);
      batch.group_id_data.push_back(id);
      batch.member_data.push_back(static_cast<int>(slot));
      batch.extra_data.push_back(std::move(group.extras[slot]));
    }
    batch.offsets.push_back(batch.outcome_data.size());
  }

  // Moves up to max_groups ready groups into a batch; the caller holds mutex_.
  ReleasedBatch<Extra> take_locked(std::size_t max_groups) {
    ReleasedBatch<Extra> batch;
    const std::size_t taking = std::min(max_groups, ready_.size());
    const std::size_t members = taking * static_cast<std::size_t>(options_.group_size);
    batch.keys.reserve(taking);
    batch.outcome_data.reserve(members);
    batch.reward_data.reserve(members);
    batch.group_id_data.reserve(members);
    batch.member_data.reserve(members);
    batch.extra_data.reserve(members);
    for (std::size_t g = 0; g < taking; ++g) {
      append(batch, ready_.front().key, ready_.front().group);
      ready_.pop_front();
    }
    return batch;
  }

  GroupBufferOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable room_;
  std::condition_variable ready_signal_;
  std::map<GroupKey, Pending> pending_;
  std::deque<Ready> ready_;
  std::set<GroupKey> released_;
  std::uint64_t accepted_ = 0;
  bool closed_ = false;
};

}  // namespace leap

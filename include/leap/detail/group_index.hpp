// SPDX-License-Identifier: Apache-2.0
// Finding the groups of a batch from its group ids. Internal: not part of the API.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace leap::detail {

// The members of every group of a batch. Trainers usually lay groups out contiguously, one id per run;
// then no permutation is built and each group is a plain sub-range of the caller's buffers. Otherwise
// (ids interleaved or repeated in several runs) the members are sorted by id, stable, so each group
// keeps its members in batch order.
class GroupIndex {
 public:
  explicit GroupIndex(std::span<const std::uint32_t> group_ids) {
    const std::size_t n = group_ids.size();
    if (n == 0) return;
    // Contiguous when every run has its own id; monotone run ids prove that without hashing.
    bool increasing = true;
    bool decreasing = true;
    starts_.push_back(0);
    for (std::size_t i = 1; i < n; ++i) {
      if (group_ids[i] != group_ids[i - 1]) {
        increasing = increasing && group_ids[i] > group_ids[i - 1];
        decreasing = decreasing && group_ids[i] < group_ids[i - 1];
        starts_.push_back(i);
      }
    }
    starts_.push_back(n);
    if (increasing || decreasing) return;

    members_.resize(n);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> keyed(n);
    for (std::size_t i = 0; i < n; ++i) keyed[i] = {group_ids[i], static_cast<std::uint32_t>(i)};
    std::sort(keyed.begin(), keyed.end());  // (id, index) pairs are unique: sorting them is stable by index
    starts_.clear();
    starts_.push_back(0);
    for (std::size_t i = 0; i < n; ++i) {
      members_[i] = keyed[i].second;
      if (i > 0 && keyed[i].first != keyed[i - 1].first) starts_.push_back(i);
    }
    starts_.push_back(n);
  }

  std::size_t group_count() const noexcept { return starts_.empty() ? 0 : starts_.size() - 1; }

  // True when every group is a sub-range [begin(g), end(g)) of the batch itself.
  bool contiguous() const noexcept { return members_.empty(); }

  std::size_t begin(std::size_t group) const noexcept { return starts_[group]; }
  std::size_t end(std::size_t group) const noexcept { return starts_[group + 1]; }

  // Batch positions of the members of a group; valid only when !contiguous().
  std::span<const std::uint32_t> members(std::size_t group) const noexcept {
    return std::span<const std::uint32_t>(members_).subspan(starts_[group], starts_[group + 1] - starts_[group]);
  }

 private:
  std::vector<std::size_t> starts_;     // group g is [starts_[g], starts_[g + 1])
  std::vector<std::uint32_t> members_;  // empty when contiguous; else batch positions sorted by group
};

// Calls fn(group_values, group_out) for every group: contiguous groups get sub-spans of the caller's
// buffers (no copy); interleaved ones are gathered into scratch and scattered back after fn.
template <class In, class Out, class Fn>
void for_each_group(const GroupIndex& index, std::span<const In> values, std::span<Out> out, Fn&& fn) {
  if (index.contiguous()) {
    for (std::size_t g = 0; g < index.group_count(); ++g) {
      const std::size_t begin = index.begin(g);
      const std::size_t size = index.end(g) - begin;
      fn(values.subspan(begin, size), out.subspan(begin, size));
    }
    return;
  }
  std::vector<In> gathered;
  std::vector<Out> results;
  for (std::size_t g = 0; g < index.group_count(); ++g) {
    const auto members = index.members(g);
    gathered.clear();
    for (std::uint32_t position : members) gathered.push_back(values[position]);
    results.assign(members.size(), Out{});
    fn(std::span<const In>(gathered), std::span<Out>(results));
    for (std::size_t k = 0; k < members.size(); ++k) out[members[k]] = results[k];
  }
}

}  // namespace leap::detail

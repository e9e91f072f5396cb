// SPDX-License-Identifier: Apache-2.0
// Visiting the groups of a batch from its group ids. Internal: not part of the API.
//
// Trainers lay groups out contiguously, one id per run, in increasing (or decreasing) id order. That
// case needs no index: the groups are found while they are computed, each a plain sub-range of the
// caller's buffers, and the ids are read once. Run ids that are monotone prove that no id comes back
// in a later run, without hashing. Any other batch (interleaved ids, an id in several runs) sorts
// (id, position) pairs, stable by position, and gathers each group into scratch buffers. All buffers
// live in a BatchScratch the caller keeps, so repeated calls of one size allocate nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "leap/outcome.hpp"

namespace leap::detail {

// The buffers of the index and of gathering; reused from call to call.
struct BatchScratch {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> keyed;  // (id, position), sorted
  std::vector<std::size_t> starts;                             // group g is keyed[starts[g] .. starts[g + 1])
  std::tuple<std::vector<Outcome>, std::vector<double>, std::vector<float>> gathered;
  std::tuple<std::vector<double>, std::vector<float>> results;

  template <class T>
  std::vector<T>& gathered_of() noexcept {
    return std::get<std::vector<T>>(gathered);
  }
  template <class T>
  std::vector<T>& results_of() noexcept {
    return std::get<std::vector<T>>(results);
  }
};

// The end of the run of ids[begin] (ids[begin] != ids[end] or end == ids.size()). Tries the length of
// the previous run first with a branch-free comparison of the whole guess, since trainers' groups
// have one size; falls back to scanning.
template <std::size_t N>
bool all_equal(const std::uint32_t* run, std::uint32_t id) noexcept {
  std::uint32_t differ = 0;
  for (std::size_t k = 0; k < N; ++k) differ |= run[k] ^ id;
  return differ == 0;
}

inline bool all_equal(const std::uint32_t* run, std::size_t size, std::uint32_t id) noexcept {
  switch (size) {  // the usual group sizes as fixed-length compares (a few SIMD instructions)
    case 4: return all_equal<4>(run, id);
    case 8: return all_equal<8>(run, id);
    case 16: return all_equal<16>(run, id);
    default: {
      std::uint32_t differ = 0;
      for (std::size_t k = 0; k < size; ++k) differ |= run[k] ^ id;
      return differ == 0;
    }
  }
}

inline std::size_t run_end(std::span<const std::uint32_t> ids, std::size_t begin, std::size_t guess) noexcept {
  const std::size_t n = ids.size();
  const std::uint32_t id = ids[begin];
  if (guess > 1 && guess <= n - begin && all_equal(ids.data() + begin, guess, id) &&
      (begin + guess == n || ids[begin + guess] != id)) {
    return begin + guess;
  }
  std::size_t end = begin + 1;
  while (end < n && ids[end] == id) ++end;
  return end;
}

// Calls fn(begin, end) for every run of equal ids, in batch order, while the run ids are monotone.
// Returns false, having stopped before the first run that breaks monotony, when they are not.
template <class Fn>
bool for_each_monotone_run(std::span<const std::uint32_t> ids, Fn&& fn) {
  const std::size_t n = ids.size();
  int direction = 0;  // +1 increasing, -1 decreasing, 0 not known yet (one run so far)
  std::size_t guess = 0;
  for (std::size_t begin = 0; begin < n;) {
    if (begin > 0) {
      const int step = ids[begin] > ids[begin - 1] ? 1 : -1;
      if (direction == 0) direction = step;
      if (step != direction) return false;
    }
    const std::size_t end = run_end(ids, begin, guess);
    fn(begin, end);
    guess = end - begin;
    begin = end;
  }
  return true;
}

// Whether every group is one run and the run ids are monotone (reads the ids only).
inline bool monotone_runs(std::span<const std::uint32_t> ids) {
  return for_each_monotone_run(ids, [](std::size_t, std::size_t) {});
}

// Whether two buffers share memory (a caller writing results over its own inputs).
template <class A, class B>
bool spans_overlap(std::span<A> a, std::span<B> b) noexcept {
  const auto address = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p); };
  return !a.empty() && !b.empty() && address(a.data()) < address(b.data() + b.size()) &&
         address(b.data()) < address(a.data() + a.size());
}

// Calls fn(group_values, group_out) for every group. Contiguous groups get sub-spans of the caller's
// buffers (no copy, no index); otherwise groups are gathered into scratch and scattered back after fn.
// fn must write every element of group_out. When values and out share memory (normalising in place,
// or a caller passing its inputs as out) the contiguous check runs before any group is computed,
// since a fallback must see the values unmodified; in_place = true asks for that explicitly.
template <class In, class Out, class Fn>
void for_each_group(std::span<const std::uint32_t> group_ids, std::span<const In> values, std::span<Out> out,
                    BatchScratch& scratch, Fn&& fn, bool in_place = false) {
  const auto visit_run = [&](std::size_t begin, std::size_t end) {
    fn(values.subspan(begin, end - begin), out.subspan(begin, end - begin));
  };
  // A caller may write the results over its own inputs (out = rewards): then too nothing may be
  // written before the fallback is ruled out.
  if (in_place || spans_overlap(values, out)) {
    if (monotone_runs(group_ids)) {
      for_each_monotone_run(group_ids, visit_run);
      return;
    }
  } else if (for_each_monotone_run(group_ids, visit_run)) {
    return;  // any runs already written are rewritten below otherwise
  }

  const std::size_t n = group_ids.size();
  auto& keyed = scratch.keyed;
  keyed.resize(n);
  for (std::size_t i = 0; i < n; ++i) keyed[i] = {group_ids[i], static_cast<std::uint32_t>(i)};
  std::sort(keyed.begin(), keyed.end());  // (id, position) pairs are unique: sorting them is stable by position
  auto& starts = scratch.starts;
  starts.clear();
  for (std::size_t i = 0; i < n; ++i) {
    if (i == 0 || keyed[i].first != keyed[i - 1].first) starts.push_back(i);
  }
  starts.push_back(n);
  std::vector<In>& gathered = scratch.gathered_of<In>();
  std::vector<Out>& results = scratch.results_of<Out>();
  for (std::size_t g = 0; g + 1 < starts.size(); ++g) {
    const std::size_t size = starts[g + 1] - starts[g];
    const auto* members = keyed.data() + starts[g];
    gathered.resize(size);
    results.resize(size);
    for (std::size_t k = 0; k < size; ++k) gathered[k] = values[members[k].second];
    fn(std::span<const In>(gathered), std::span<Out>(results));
    for (std::size_t k = 0; k < size; ++k) out[members[k].second] = results[k];
  }
}

}  // namespace leap::detail

// SPDX-License-Identifier: Apache-2.0
// AdvantageWorkspace: the memory the batched advantage functions work in, kept by the caller so that
// a training loop allocates it once.
//
// rank_advantages, rank_advantages_of_scores, grpo_advantages, rloo_advantages and
// normalize_advantages each take one as their last argument. The overloads without it use one
// workspace per thread (thread_advantage_workspace()), so they too allocate nothing after the first
// call of a given size. A workspace only grows: it holds on to the largest batch it has seen until
// release(). When the ids arrive in contiguous runs in increasing or decreasing id order (as trainers
// lay out their groups), no index is built: GRPO, RLOO and the rank of small groups then use no
// workspace memory at all.
//
// One workspace serves one call at a time: give each thread its own. Using a workspace again inside
// a call that is using it (a custom order whose compare() ranks another batch with it) throws
// std::logic_error; the per-thread workspace instead lends such a nested call a fresh one.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "leap/detail/group_index.hpp"
#include "leap/detail/rank_kernels.hpp"

namespace leap {
namespace detail {
struct WorkspaceAccess;
}

class AdvantageWorkspace {
 public:
  AdvantageWorkspace() = default;
  AdvantageWorkspace(const AdvantageWorkspace&) = delete;
  AdvantageWorkspace& operator=(const AdvantageWorkspace&) = delete;
  AdvantageWorkspace(AdvantageWorkspace&&) noexcept = default;
  AdvantageWorkspace& operator=(AdvantageWorkspace&&) noexcept = default;

  // Frees every buffer; the next call allocates again.
  void release() {
    if (busy_) throw std::logic_error("leap::AdvantageWorkspace::release: the workspace is in use by a call");
    batch_ = detail::BatchScratch{};
    rank_ = detail::RankWorkspace{};
    sorted_ = std::vector<double>{};
  }

  bool busy() const noexcept { return busy_; }

 private:
  friend struct detail::WorkspaceAccess;
  detail::BatchScratch batch_;
  detail::RankWorkspace rank_;
  std::vector<double> sorted_;  // rank_advantages_of_scores' sorted group
  bool busy_ = false;
};

namespace detail {

// The library's way into a workspace; marks it busy for the duration of one call.
struct WorkspaceAccess {
  explicit WorkspaceAccess(AdvantageWorkspace& workspace, const char* function) : workspace_(workspace) {
    if (workspace.busy_) {
      throw std::logic_error(std::string("leap::") + function +
                             ": the AdvantageWorkspace passed is already in use by a call further up the stack "
                             "(or by another thread); give each thread and each nested call its own");
    }
    workspace.busy_ = true;
  }
  ~WorkspaceAccess() { workspace_.busy_ = false; }
  WorkspaceAccess(const WorkspaceAccess&) = delete;
  WorkspaceAccess& operator=(const WorkspaceAccess&) = delete;

  BatchScratch& batch() noexcept { return workspace_.batch_; }
  RankWorkspace& rank() noexcept { return workspace_.rank_; }
  std::vector<double>& sorted() noexcept { return workspace_.sorted_; }

 private:
  AdvantageWorkspace& workspace_;
};

}  // namespace detail

// The calling thread's workspace, used by the overloads that take none. release() it to give the
// memory of a large batch back.
inline AdvantageWorkspace& thread_advantage_workspace() {
  thread_local AdvantageWorkspace workspace;
  return workspace;
}

namespace detail {

// Runs fn(workspace) with the thread's workspace, or with a fresh one when a call further up this
// thread's stack holds it.
template <class Fn>
decltype(auto) with_thread_workspace(Fn&& fn) {
  AdvantageWorkspace& shared = thread_advantage_workspace();
  if (shared.busy()) {
    AdvantageWorkspace nested;
    return std::forward<Fn>(fn)(nested);
  }
  return std::forward<Fn>(fn)(shared);
}

}  // namespace detail

}  // namespace leap

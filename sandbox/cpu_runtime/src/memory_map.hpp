// SPDX-License-Identifier: Apache-2.0
// The runtime's own memory, mapped so that running past it faults instead of corrupting something:
// the CUDA threads' stacks (a guard page below each) and a worker's shared-memory arena (static
// variables, then the launch's dynamic shared memory ending at a guard page). The fault handler
// (fault_escape.hpp) asks them whether a faulting address is one of their guard pages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sanitizer_fibers.hpp"

namespace leap::cpu_runtime::detail {

std::size_t page_size() noexcept;

class Stack {
 public:
  explicit Stack(std::size_t usable_bytes);  // throws std::bad_alloc when mmap fails
  ~Stack();
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;
  void* top() const noexcept { return base_ + total_; }
  std::size_t size() const noexcept { return total_ - guard_; }  // usable bytes below top()
  bool guard_holds(const void* address) const noexcept;
  const FiberIdentity& identity() const noexcept { return identity_; }  // for the sanitizers

 private:
  FiberIdentity identity_;
  unsigned char* base_ = nullptr;
  std::size_t total_ = 0;
  std::size_t guard_ = 0;
};

// A worker's stacks, reused from block to block and from thread to thread; between launches they wait
// in a process-wide cache (a stack's pages, once touched, stay: no fault and no unmapping per launch).
class StackPool {
 public:
  explicit StackPool(std::size_t usable_bytes) : usable_(usable_bytes) {}
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;
  Stack* acquire();
  void release(Stack* stack) { free_.push_back(stack); }
  const Stack* guard_owner(const void* address) const noexcept;  // the stack whose guard page holds it
  std::size_t allocated() const noexcept { return all_.size(); }

 private:
  std::size_t usable_;
  std::vector<std::unique_ptr<Stack>> all_;
  std::vector<Stack*> free_;
};

// One worker's shared memory: [static slots: k_static_bytes][dynamic bytes, 16-aligned][guard page].
class Arena {
 public:
  static constexpr std::uint64_t k_static_bytes = std::uint64_t{1} << 20;
  // An arena with room for `dynamic_bytes`, from the process-wide cache when one there has the room.
  static std::unique_ptr<Arena> take(std::uint64_t dynamic_bytes);
  static void give(std::unique_ptr<Arena> arena);  // back to the cache
  explicit Arena(std::uint64_t dynamic_bytes);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  unsigned char* static_base() const noexcept { return base_; }
  unsigned char* dynamic_base() const noexcept { return dynamic_; }
  std::uint64_t dynamic_bytes() const noexcept { return dynamic_bytes_; }
  bool guard_holds(const void* address) const noexcept;
  // Fills the static slots in use and the dynamic part with `byte`.
  void poison(std::uint64_t static_used, unsigned char byte) noexcept;

 private:
  unsigned char* base_ = nullptr;
  std::size_t total_ = 0;
  void place(std::uint64_t dynamic_bytes) noexcept;  // the dynamic part ends at the guard
  unsigned char* dynamic_ = nullptr;
  unsigned char* guard_ = nullptr;
  std::uint64_t dynamic_room_ = 0;
  std::uint64_t dynamic_bytes_ = 0;
};

}  // namespace leap::cpu_runtime::detail

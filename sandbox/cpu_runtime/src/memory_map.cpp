// SPDX-License-Identifier: Apache-2.0
#include "memory_map.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>

namespace leap::cpu_runtime::detail {
namespace {

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

unsigned char* map(std::size_t bytes, bool stack) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (stack ? MAP_STACK : 0), -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return static_cast<unsigned char*>(p);
}

}  // namespace

std::size_t page_size() noexcept {
  static const std::size_t size = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

Stack::Stack(std::size_t usable_bytes)
    : total_(round_up(usable_bytes, page_size()) + page_size()), guard_(page_size()) {
  base_ = map(total_, true);
  mprotect(base_, guard_, PROT_NONE);  // the stack grows down into this page and faults there
  identity_ = FiberIdentity{base_ + guard_, total_ - guard_, new_tsan_fiber()};
}

Stack::~Stack() {
  delete_tsan_fiber(identity_.tsan_fiber);
  munmap(base_, total_);
}

bool Stack::guard_holds(const void* address) const noexcept {
  const auto* a = static_cast<const unsigned char*>(address);
  return a >= base_ && a < base_ + guard_;
}

namespace {

// What launches leave for the next ones: stacks by usable size, and arenas.
struct Cache {
  std::mutex mutex;
  std::vector<std::pair<std::size_t, std::unique_ptr<Stack>>> stacks;
  std::vector<std::unique_ptr<Arena>> arenas;
};
Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: workers may return stacks during exit
  return *c;
}
constexpr std::size_t k_cached_stacks = 4096;
constexpr std::size_t k_cached_arenas = 16;

}  // namespace

Stack* StackPool::acquire() {
  if (free_.empty()) {
    std::unique_ptr<Stack> s;
    {
      Cache& c = cache();
      std::lock_guard<std::mutex> lock(c.mutex);
      for (std::size_t i = c.stacks.size(); i-- > 0;) {
        if (c.stacks[i].first != usable_) continue;
        s = std::move(c.stacks[i].second);
        c.stacks.erase(c.stacks.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    if (!s) s = std::make_unique<Stack>(usable_);
    all_.push_back(std::move(s));
    return all_.back().get();
  }
  Stack* s = free_.back();
  free_.pop_back();
  return s;
}

StackPool::~StackPool() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  for (std::unique_ptr<Stack>& s : all_)
    if (c.stacks.size() < k_cached_stacks) c.stacks.emplace_back(usable_, std::move(s));
}

std::unique_ptr<Arena> Arena::take(std::uint64_t dynamic_bytes) {
  {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mutex);
    for (std::size_t i = c.arenas.size(); i-- > 0;) {
      if (c.arenas[i]->dynamic_room_ < round_up(dynamic_bytes, 16)) continue;
      std::unique_ptr<Arena> a = std::move(c.arenas[i]);
      c.arenas.erase(c.arenas.begin() + static_cast<std::ptrdiff_t>(i));
      a->place(dynamic_bytes);
      return a;
    }
  }
  return std::make_unique<Arena>(dynamic_bytes);
}

void Arena::give(std::unique_ptr<Arena> arena) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  if (c.arenas.size() < k_cached_arenas) c.arenas.push_back(std::move(arena));
}

const Stack* StackPool::guard_owner(const void* address) const noexcept {
  for (const auto& s : all_)
    if (s->guard_holds(address)) return s.get();
  return nullptr;
}

Arena::Arena(std::uint64_t dynamic_bytes) {
  dynamic_room_ = round_up(round_up(dynamic_bytes, 16), page_size());
  total_ = k_static_bytes + dynamic_room_ + page_size();
  base_ = map(total_, false);
  guard_ = base_ + total_ - page_size();
  mprotect(guard_, page_size(), PROT_NONE);
  place(dynamic_bytes);
}

void Arena::place(std::uint64_t dynamic_bytes) noexcept {
  dynamic_bytes_ = dynamic_bytes;
  dynamic_ = guard_ - round_up(dynamic_bytes, 16);  // ends at the guard: one byte past the room faults
}

Arena::~Arena() { munmap(base_, total_); }

bool Arena::guard_holds(const void* address) const noexcept {
  const auto* a = static_cast<const unsigned char*>(address);
  return a >= guard_ && a < guard_ + page_size();
}

void Arena::poison(std::uint64_t static_used, unsigned char byte) noexcept {
  std::memset(base_, byte, std::min<std::uint64_t>(static_used, k_static_bytes));
  std::memset(dynamic_, byte, dynamic_bytes_);
}

}  // namespace leap::cpu_runtime::detail

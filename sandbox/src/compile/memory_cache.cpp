// SPDX-License-Identifier: Apache-2.0
#include "compile/memory_cache.hpp"

#include <cstring>

namespace leap::sandbox::detail {
namespace {

// What an entry costs the budget: its texts, and a fixed allowance for the bookkeeping around them.
std::size_t footprint(const CompileResult& r) noexcept {
  std::size_t n = 256 + r.log.size() + r.ptx.size() + r.cubin.size();
  for (const LoweredName& l : r.lowered_names) n += l.expression.size() + l.lowered.size() + 64;
  return n;
}

}  // namespace

std::size_t MemoryCache::DigestHash::operator()(const Digest& d) const noexcept {
  std::size_t h = 0;
  std::memcpy(&h, d.data(), sizeof h);  // already uniformly distributed
  return h;
}

std::optional<CompileResult> MemoryCache::find(const Digest& key) {
  const auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->result;
}

void MemoryCache::insert(const Digest& key, const CompileResult& r) {
  if (budget_ == 0) return;
  const std::size_t size = footprint(r);
  if (size > budget_) return;
  if (auto it = index_.find(key); it != index_.end()) {
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
  }
  lru_.push_front(Entry{key, r, size});
  lru_.front().result.cache_hit = false;
  index_.emplace(key, lru_.begin());
  bytes_ += size;
  while (bytes_ > budget_ && !lru_.empty()) {
    bytes_ -= lru_.back().bytes;
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
}

void MemoryCache::clear() {
  lru_.clear();
  index_.clear();
  bytes_ = 0;
}

}  // namespace leap::sandbox::detail

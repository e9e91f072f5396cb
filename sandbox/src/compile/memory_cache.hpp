// SPDX-License-Identifier: Apache-2.0
// The compile cache's memory tier: results by key digest, least recently used first out, within a
// byte budget. Not locked: CompileCache holds its one mutex around every call, with its statistics.
#pragma once

#include <cstddef>
#include <list>
#include <optional>
#include <unordered_map>

#include "common/sha256.hpp"
#include "leap/sandbox/compile_result.hpp"

namespace leap::sandbox::detail {

class MemoryCache {
 public:
  explicit MemoryCache(std::size_t budget_bytes) : budget_(budget_bytes) {}

  // The result kept under `key`, now the most recently used; nullopt when none is.
  std::optional<CompileResult> find(const Digest& key);
  // Keeps `result` under `key` (replacing what was there), then drops the least recently used
  // until the tier is within its budget; a result larger than the whole budget is not kept.
  void insert(const Digest& key, const CompileResult& result);
  void clear();

  std::size_t entries() const noexcept { return lru_.size(); }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  struct Entry {
    Digest key;
    CompileResult result;
    std::size_t bytes;
  };
  struct DigestHash {
    std::size_t operator()(const Digest& d) const noexcept;
  };

  std::size_t budget_;
  std::list<Entry> lru_;  // front = most recent
  std::unordered_map<Digest, std::list<Entry>::iterator, DigestHash> index_;
  std::size_t bytes_ = 0;
};

}  // namespace leap::sandbox::detail

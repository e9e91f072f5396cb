// SPDX-License-Identifier: Apache-2.0
// The compile cache's disk tier: one authenticated file per result under a private directory, shared
// by every process that names it. Paths are opened relative to the directory's descriptor without
// following symlinks; an entry is a magic, its key's digest, the encoded result and an HMAC under the
// directory's own key, so a torn, edited or planted file is refused and removed. A running total of
// the entries' bytes, kept under a flock, decides when the least recently used go.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include "common/unique_fd.hpp"
#include "leap/sandbox/compile_cache.hpp"
#include "leap/sandbox/compile_result.hpp"

namespace leap::sandbox::detail {

class DiskCache {
 public:
  // Opens (making it when missing) the private directory `directory`, its MAC key and its usage
  // file; throws std::runtime_error naming the directory and the fix when it is not safe to use.
  DiskCache(std::filesystem::path directory, std::uint64_t budget_bytes);

  // The result stored under `key`; nullopt when there is none, or when the entry is refused, with
  // `corrupt` set (and the entry removed) for one that is not what this cache wrote.
  std::optional<CompileResult> read(const CacheKey& key, bool& corrupt) const;

  // What a write did, for the cache's statistics.
  struct Written {
    bool skipped = false;       // the entry is larger than an eighth of the budget
    std::uint64_t evicted = 0;  // entries removed to bring the directory back within its budget
  };
  // Stores `result` under `key`, atomically (a private temporary name, then rename). A cache that
  // cannot write is still a correct cache: failures are silent.
  Written write(const CacheKey& key, const CompileResult& result);

  std::filesystem::path entry_path(const CacheKey& key) const;
  // The running total of the entries' bytes; 0 when it cannot be read.
  std::uint64_t usage();

 private:
  std::size_t max_entry_bytes() const { return budget_ / 8; }
  void open_directory();
  void load_or_create_mac_key();
  UniqueFd open_shard(const std::string& shard, bool create, bool& unsafe_shard) const;
  std::optional<std::uint64_t> read_usage() const;
  void write_usage(std::uint64_t v) const;
  std::uint64_t evict(std::uint64_t& removed);

  std::filesystem::path directory_;
  std::uint64_t budget_;
  UniqueFd dir_fd_;
  UniqueFd usage_fd_;  // flock'ed while the budget is kept; holds the running total
  std::string mac_key_;
  std::mutex disk_mutex_;  // flock does not exclude threads sharing one descriptor
  std::atomic<unsigned long long> tmp_counter_{0};
};

}  // namespace leap::sandbox::detail

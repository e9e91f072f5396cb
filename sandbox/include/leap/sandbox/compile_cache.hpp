// SPDX-License-Identifier: Apache-2.0
// A content-addressed cache of compile results: an in-memory LRU and an optional directory on disk.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "leap/sandbox/compile_options.hpp"
#include "leap/sandbox/compile_result.hpp"

namespace leap::sandbox {

// SHA-256 over every input that can change the output: the source, the shipped headers (sorted by
// name), the canonical options, the arch, the NVRTC version and the sandbox's format version, each
// length-prefixed so no two different inputs serialise alike. Keys collide only if SHA-256 does
// (about 2^-128 for any pair, and no known way to construct one), so a hit is trusted as equal input.
// The time limit and log cap are not part of the key; only NVRTC's own verdicts are cached.
struct CacheKey {
  std::array<std::uint8_t, 32> digest{};  // SHA-256
  std::string hex() const;                // 64 lowercase hex digits
  friend bool operator==(const CacheKey&, const CacheKey&) = default;
};

CacheKey make_cache_key(const CompileJob& job, std::string_view compiler_version);

constexpr std::size_t k_default_cache_disk_bytes = std::size_t{1} << 30;
constexpr std::size_t k_min_cache_disk_bytes = std::size_t{64} << 10;

struct CacheOptions {
  std::size_t memory_bytes = std::size_t{256} << 20;  // LRU budget for PTX + CUBIN + logs; 0 = no memory tier
  std::optional<std::filesystem::path> directory;     // on-disk tier; created (0700) when missing
  // The disk tier's budget: the entries' total size stays under it, least recently used going first.
  // An entry larger than an eighth of it is not kept on disk (one source cannot flush the cache).
  std::size_t disk_bytes = k_default_cache_disk_bytes;
};

struct CacheStats {
  std::uint64_t memory_hits = 0;
  std::uint64_t disk_hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t corrupt = 0;  // disk entries refused: bad MAC, wrong key, malformed, a symlink (treated as misses)
  std::uint64_t stores = 0;
  std::uint64_t disk_evictions = 0;  // entries this process removed to keep the disk tier in budget
  std::uint64_t disk_skipped = 0;    // results too large for the disk tier
  std::size_t memory_entries = 0;
  std::size_t memory_bytes = 0;
};

// Thread-safe. Several processes may share one directory: entries are written to a private temporary
// file and renamed into place (atomic on POSIX), and every read checks the entry's HMAC-SHA256 under
// a random key kept in the directory (file "mac.key", 0600), so a torn, truncated, edited or planted
// file is a miss, removed, and replaced by the next store. The directory is 0700 and must belong to
// the user; entries are 0600; nothing in it is opened through a symlink. The disk budget is kept
// under an flock on "usage" (which also holds the running total): a store that takes the total past
// the budget scans the directory and removes the least recently used entries (by mtime, which a hit
// refreshes) down to three quarters of it.
class CompileCache {
 public:
  // Throws std::runtime_error when the directory cannot be made safe: a symlink, owned by someone
  // else, or a MAC key file that is not a 0600 file of 32 bytes owned by the user; and
  // std::invalid_argument for a disk budget below k_min_cache_disk_bytes.
  explicit CompileCache(CacheOptions options = {});
  ~CompileCache();
  CompileCache(const CompileCache&) = delete;
  CompileCache& operator=(const CompileCache&) = delete;

  // A hit comes back with cache_hit = true; seconds is left to the caller.
  std::optional<CompileResult> find(const CacheKey& key);
  // Keeps only NVRTC's verdicts: status ok or error with nvrtc_verdict set, not itself a hit.
  void store(const CacheKey& key, const CompileResult& result);
  CacheStats stats() const;
  void clear_memory();
  const CacheOptions& options() const noexcept;
  std::filesystem::path entry_path(const CacheKey& key) const;  // where the disk tier keeps it
  std::uint64_t disk_usage() const;  // the entries' total bytes as the shared counter says; 0 without a disk tier

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace leap::sandbox

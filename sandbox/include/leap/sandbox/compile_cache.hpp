// SPDX-License-Identifier: Apache-2.0
// A content-addressed cache of compile results: an in-memory LRU and an optional directory on disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "leap/sandbox/compile_options.hpp"
#include "leap/sandbox/compile_result.hpp"
#include "leap/sandbox/sha256.hpp"

namespace leap::sandbox {

// SHA-256 over every input that can change the output: the source, the shipped headers (sorted by
// name), the canonical options, the arch, the NVRTC version and the sandbox's format version, each
// length-prefixed so no two different inputs serialise alike. Keys collide only if SHA-256 does
// (about 2^-128 for any pair, and no known way to construct one), so a hit is trusted as equal input.
// The time limit and log cap are not part of the key; only ok and error results are cached.
struct CacheKey {
  Digest digest{};
  std::string hex() const { return to_hex(digest); }
  friend bool operator==(const CacheKey&, const CacheKey&) = default;
};

CacheKey make_cache_key(const CompileJob& job, std::string_view compiler_version);

struct CacheOptions {
  std::size_t memory_bytes = std::size_t{256} << 20;  // LRU budget for PTX + CUBIN + logs; 0 = no memory tier
  std::optional<std::filesystem::path> directory;     // on-disk tier; created when missing
};

struct CacheStats {
  std::uint64_t memory_hits = 0;
  std::uint64_t disk_hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t corrupt = 0;  // disk entries that failed the integrity check (treated as misses)
  std::uint64_t stores = 0;
  std::size_t memory_entries = 0;
  std::size_t memory_bytes = 0;
};

// Thread-safe. Several processes may share one directory: entries are written to a private temporary
// file and renamed into place (atomic on POSIX), and every read checks a SHA-256 of the entry, so a
// torn, truncated or tampered file is a miss and is replaced by the next store.
class CompileCache {
 public:
  explicit CompileCache(CacheOptions options = {});
  ~CompileCache();
  CompileCache(const CompileCache&) = delete;
  CompileCache& operator=(const CompileCache&) = delete;

  // A hit comes back with cache_hit = true; seconds is left to the caller.
  std::optional<CompileResult> find(const CacheKey& key);
  void store(const CacheKey& key, const CompileResult& result);  // only ok and error are kept
  CacheStats stats() const;
  void clear_memory();
  const CacheOptions& options() const noexcept;
  std::filesystem::path entry_path(const CacheKey& key) const;  // where the disk tier keeps it

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace leap::sandbox

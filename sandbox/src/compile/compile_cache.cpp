// SPDX-License-Identifier: Apache-2.0
// The public CompileCache: the key of a job, and the two tiers behind one lock and one set of
// statistics. The tiers are their own files: compile/memory_cache (an LRU in this process) and
// compile/disk_cache (authenticated files shared between processes).
#include "leap/sandbox/compile_cache.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/little_endian.hpp"
#include "common/sha256.hpp"
#include "compile/cacheable.hpp"
#include "compile/disk_cache.hpp"
#include "compile/memory_cache.hpp"
#include "compile/nvrtc_flags.hpp"

namespace leap::sandbox {
namespace {

// v2: entries hold the result's limit (result_codec.hpp); v1's are never looked up, and age out.
constexpr std::string_view k_key_domain = "leap-sandbox/cache-key/v2";

}  // namespace

std::string CacheKey::hex() const { return to_hex(digest); }

CacheKey make_cache_key(const CompileJob& job, std::string_view compiler_version) {
  Sha256 h;
  std::string buf;
  auto field = [&](std::string_view bytes) {
    buf.clear();
    detail::put_u64(buf, bytes.size());
    h.update(buf);
    h.update(bytes);
  };
  field(k_key_domain);
  field(compiler_version);
  const CompileOptions& o = job.options;
  for (const std::string& f : detail::nvrtc_flags(o)) field(f);
  field("--");
  field(o.want_ptx ? "ptx" : "-");
  field(o.want_cubin ? "cubin" : "-");
  for (const std::string& e : o.name_expressions) field("name:" + e);
  field("--");
  field(job.file_name);
  field(job.source);
  std::vector<const Header*> headers;
  for (const Header& hd : job.headers) headers.push_back(&hd);
  std::sort(headers.begin(), headers.end(), [](const Header* a, const Header* b) { return a->name < b->name; });
  for (const Header* hd : headers) {
    field(hd->name);
    field(hd->content);
  }
  return CacheKey{h.finish()};
}

struct CompileCache::Impl {
  explicit Impl(CacheOptions opts) : options(std::move(opts)), memory(options.memory_bytes) {}

  CacheOptions options;
  mutable std::mutex mutex;  // the memory tier and the statistics
  detail::MemoryCache memory;
  CacheStats stats;
  std::unique_ptr<detail::DiskCache> disk;  // none without a directory
};

CompileCache::CompileCache(CacheOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  if (impl_->options.directory) {
    if (impl_->options.disk_bytes < k_min_cache_disk_bytes) {
      throw std::invalid_argument(
          "leap::sandbox: CacheOptions::disk_bytes = " + std::to_string(impl_->options.disk_bytes) +
          " is below the minimum of " + std::to_string(k_min_cache_disk_bytes) + " bytes");
    }
    impl_->disk = std::make_unique<detail::DiskCache>(*impl_->options.directory, impl_->options.disk_bytes);
  }
}

CompileCache::~CompileCache() = default;

std::optional<CompileResult> CompileCache::find(const CacheKey& key) {
  {
    std::lock_guard lock(impl_->mutex);
    if (std::optional<CompileResult> r = impl_->memory.find(key.digest)) {
      ++impl_->stats.memory_hits;
      r->cache_hit = true;
      return r;
    }
  }
  if (impl_->disk) {
    bool corrupt = false;
    std::optional<CompileResult> r = impl_->disk->read(key, corrupt);
    std::lock_guard lock(impl_->mutex);
    if (r) {
      ++impl_->stats.disk_hits;
      impl_->memory.insert(key.digest, *r);
      r->cache_hit = true;
      return r;
    }
    if (corrupt) ++impl_->stats.corrupt;
  }
  std::lock_guard lock(impl_->mutex);
  ++impl_->stats.misses;
  return std::nullopt;
}

void CompileCache::store(const CacheKey& key, const CompileResult& result) {
  if (!detail::cacheable(result)) return;
  CompileResult kept = result;
  kept.kernels.reset();  // derived from the CUBIN on every answer
  {
    std::lock_guard lock(impl_->mutex);
    impl_->memory.insert(key.digest, kept);
    ++impl_->stats.stores;
  }
  if (!impl_->disk) return;
  const detail::DiskCache::Written written = impl_->disk->write(key, kept);
  std::lock_guard lock(impl_->mutex);
  if (written.skipped) ++impl_->stats.disk_skipped;
  impl_->stats.disk_evictions += written.evicted;
}

CacheStats CompileCache::stats() const {
  std::lock_guard lock(impl_->mutex);
  CacheStats s = impl_->stats;
  s.memory_entries = impl_->memory.entries();
  s.memory_bytes = impl_->memory.bytes();
  return s;
}

void CompileCache::clear_memory() {
  std::lock_guard lock(impl_->mutex);
  impl_->memory.clear();
}

const CacheOptions& CompileCache::options() const noexcept { return impl_->options; }

std::filesystem::path CompileCache::entry_path(const CacheKey& key) const {
  if (!impl_->disk) return {};
  return impl_->disk->entry_path(key);
}

std::uint64_t CompileCache::disk_usage() const {
  if (!impl_->disk) return 0;
  return impl_->disk->usage();
}

}  // namespace leap::sandbox

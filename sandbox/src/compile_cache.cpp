// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/compile_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <iterator>
#include <list>
#include <mutex>
#include <system_error>
#include <unordered_map>

#include "detail.hpp"

namespace leap::sandbox {
namespace {

constexpr std::string_view k_key_domain = "leap-sandbox/cache-key/v1";
constexpr std::string_view k_file_magic = "LEAPSBX1";

struct DigestHash {
  std::size_t operator()(const Digest& d) const noexcept {
    std::size_t h = 0;
    std::memcpy(&h, d.data(), sizeof h);  // already uniformly distributed
    return h;
  }
};

std::size_t footprint(const CompileResult& r) noexcept {
  std::size_t n = 256 + r.log.size() + r.ptx.size() + r.cubin.size();
  for (const LoweredName& l : r.lowered_names) n += l.expression.size() + l.lowered.size() + 64;
  return n;
}

bool cacheable(const CompileResult& r) noexcept {
  return (r.status == CompileStatus::ok || r.status == CompileStatus::error) && !r.cache_hit;
}

}  // namespace

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
  CacheOptions options;
  mutable std::mutex mutex;
  struct Entry {
    Digest key;
    CompileResult result;
    std::size_t bytes;
  };
  std::list<Entry> lru;  // front = most recent
  std::unordered_map<Digest, std::list<Entry>::iterator, DigestHash> index;
  std::size_t bytes = 0;
  CacheStats stats;
  std::atomic<unsigned long long> tmp_counter{0};

  void insert_memory(const Digest& key, const CompileResult& r) {  // holds mutex
    if (options.memory_bytes == 0) return;
    const std::size_t size = footprint(r);
    if (size > options.memory_bytes) return;
    if (auto it = index.find(key); it != index.end()) {
      bytes -= it->second->bytes;
      lru.erase(it->second);
      index.erase(it);
    }
    lru.push_front(Entry{key, r, size});
    lru.front().result.cache_hit = false;
    index.emplace(key, lru.begin());
    bytes += size;
    while (bytes > options.memory_bytes && !lru.empty()) {
      bytes -= lru.back().bytes;
      index.erase(lru.back().key);
      lru.pop_back();
    }
  }

  std::optional<CompileResult> read_disk(const CacheKey& key, const std::filesystem::path& path, bool& corrupt) const {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t fixed = k_file_magic.size() + 32 + 32;
    corrupt = true;
    if (data.size() < fixed) return std::nullopt;
    std::string_view v(data);
    const std::string_view body = v.substr(0, v.size() - 32);
    const Digest sum = sha256(body);
    if (std::memcmp(sum.data(), v.data() + body.size(), 32) != 0) return std::nullopt;
    if (!body.starts_with(k_file_magic)) return std::nullopt;
    if (std::memcmp(body.data() + k_file_magic.size(), key.digest.data(), 32) != 0) return std::nullopt;
    std::optional<CompileResult> r = detail::decode_result(body.substr(k_file_magic.size() + 32));
    if (!r || !cacheable(*r)) return std::nullopt;
    corrupt = false;
    return r;
  }

  void write_disk(const CacheKey& key, const CompileResult& r) {
    std::string data(k_file_magic);
    data.append(reinterpret_cast<const char*>(key.digest.data()), key.digest.size());
    data += detail::encode_result(r);
    const Digest sum = sha256(data);
    data.append(reinterpret_cast<const char*>(sum.data()), sum.size());

    const std::filesystem::path final_path = entry_path(key);
    std::error_code ec;
    std::filesystem::create_directories(final_path.parent_path(), ec);
    // A name private to this process and call, in the same directory so rename stays atomic.
    const std::filesystem::path tmp = final_path.parent_path() /
        (".tmp-" + key.hex().substr(0, 16) + "-" + std::to_string(::getpid()) + "-" + std::to_string(tmp_counter++));
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return;  // a cache that cannot write is still a correct cache
    std::size_t done = 0;
    bool good = true;
    while (done < data.size()) {
      const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
      if (n <= 0) {
        good = false;
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    good = (::close(fd) == 0) && good;
    if (!good || std::rename(tmp.c_str(), final_path.c_str()) != 0) std::filesystem::remove(tmp, ec);
  }

  std::filesystem::path entry_path(const CacheKey& key) const {
    const std::string hex = key.hex();
    return *options.directory / hex.substr(0, 2) / (hex + ".bin");
  }
};

CompileCache::CompileCache(CacheOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  if (impl_->options.directory) {
    std::error_code ec;
    std::filesystem::create_directories(*impl_->options.directory, ec);
    if (ec) {
      throw std::runtime_error("leap::sandbox: cannot create the cache directory " +
                               impl_->options.directory->string() + ": " + ec.message());
    }
  }
}

CompileCache::~CompileCache() = default;

std::optional<CompileResult> CompileCache::find(const CacheKey& key) {
  {
    std::lock_guard lock(impl_->mutex);
    if (auto it = impl_->index.find(key.digest); it != impl_->index.end()) {
      impl_->lru.splice(impl_->lru.begin(), impl_->lru, it->second);
      ++impl_->stats.memory_hits;
      CompileResult r = it->second->result;
      r.cache_hit = true;
      return r;
    }
  }
  if (impl_->options.directory) {
    bool corrupt = false;
    std::optional<CompileResult> r = impl_->read_disk(key, impl_->entry_path(key), corrupt);
    std::lock_guard lock(impl_->mutex);
    if (r) {
      ++impl_->stats.disk_hits;
      impl_->insert_memory(key.digest, *r);
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
  if (!cacheable(result)) return;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->insert_memory(key.digest, result);
    ++impl_->stats.stores;
  }
  if (impl_->options.directory) impl_->write_disk(key, result);
}

CacheStats CompileCache::stats() const {
  std::lock_guard lock(impl_->mutex);
  CacheStats s = impl_->stats;
  s.memory_entries = impl_->lru.size();
  s.memory_bytes = impl_->bytes;
  return s;
}

void CompileCache::clear_memory() {
  std::lock_guard lock(impl_->mutex);
  impl_->lru.clear();
  impl_->index.clear();
  impl_->bytes = 0;
}

const CacheOptions& CompileCache::options() const noexcept { return impl_->options; }

std::filesystem::path CompileCache::entry_path(const CacheKey& key) const {
  if (!impl_->options.directory) return {};
  return impl_->entry_path(key);
}

}  // namespace leap::sandbox

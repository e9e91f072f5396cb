// SPDX-License-Identifier: Apache-2.0
#include "leap/sandbox/compile_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <list>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/fd_io.hpp"
#include "common/unique_fd.hpp"
#include "common/key_file.hpp"
#include "common/little_endian.hpp"
#include "compile/nvrtc_flags.hpp"
#include "compile/result_codec.hpp"
#include "common/sha256.hpp"

namespace leap::sandbox {
namespace {

using detail::UniqueFd;

constexpr std::string_view k_key_domain = "leap-sandbox/cache-key/v1";
constexpr std::string_view k_file_magic = "LEAPSBX2";
constexpr const char* k_mac_key_file = "mac.key";
constexpr const char* k_usage_file = "usage";
constexpr std::size_t k_mac_key_bytes = 32;
constexpr std::size_t k_entry_overhead = k_file_magic.size() + 32 + 32;  // magic, key digest, MAC

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

// NVRTC's own verdicts only: a child killed by a signal, a limit, an internal failure is not a
// property of the source and must not be replayed to every later compile of it.
bool cacheable(const CompileResult& r) noexcept {
  return (r.status == CompileStatus::ok || r.status == CompileStatus::error) && r.nvrtc_verdict && !r.cache_hit;
}

[[noreturn]] void unsafe(const std::filesystem::path& dir, const std::string& why) {
  throw std::runtime_error("leap::sandbox: the cache directory " + dir.string() + " " + why);
}

timespec now_realtime() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return t;
}

bool is_shard_name(const std::string& n) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); };
  return n.size() == 2 && hex(n[0]) && hex(n[1]);
}

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

  // The disk tier: every path below the directory is opened relative to dir_fd, without following
  // symlinks, so swapping a shard or an entry for a link leads nowhere.
  UniqueFd dir_fd;
  UniqueFd usage_fd;  // flock'ed while the budget is kept; holds the running total
  std::string mac_key;
  std::mutex disk_mutex;  // flock does not exclude threads sharing one descriptor

  std::size_t max_entry_bytes() const { return options.disk_bytes / 8; }

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

  void open_directory() {
    const std::filesystem::path& dir = *options.directory;
    std::error_code ec;
    if (dir.has_parent_path()) std::filesystem::create_directories(dir.parent_path(), ec);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) unsafe(dir, std::string("cannot be created: ") + std::strerror(errno));
    dir_fd = UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir_fd) {
      unsafe(dir, errno == ELOOP || errno == ENOTDIR ? "is a symlink or not a directory; give a real directory"
                                                     : std::string("cannot be opened: ") + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(dir_fd.get(), &st) != 0) unsafe(dir, "cannot be examined");
    if (st.st_uid != ::geteuid()) unsafe(dir, "belongs to another user; give a directory of your own");
    if ((st.st_mode & 077) != 0 && ::fchmod(dir_fd.get(), 0700) != 0) unsafe(dir, "is open to other users and cannot be made 0700");
    load_or_create_mac_key();
    usage_fd = UniqueFd(::openat(dir_fd.get(), k_usage_file, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!usage_fd) unsafe(dir, std::string("has an unusable usage file: ") + std::strerror(errno));
  }

  void load_or_create_mac_key() {
    std::string why;
    std::optional<std::string> key = detail::load_or_create_key_file(
        dir_fd.get(), k_mac_key_file, k_mac_key_bytes, "remove it (the cache rebuilds itself)", why);
    if (!key) unsafe(*options.directory, why);
    mac_key = std::move(*key);
  }

  // The shard directory of an entry, opened without following a symlink; -1 when missing or unsafe.
  UniqueFd open_shard(const std::string& shard, bool create, bool& unsafe_shard) const {
    if (create && ::mkdirat(dir_fd.get(), shard.c_str(), 0700) != 0 && errno != EEXIST) return UniqueFd();
    UniqueFd fd(::openat(dir_fd.get(), shard.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
      unsafe_shard = errno == ELOOP || errno == ENOTDIR;
      return fd;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || st.st_uid != ::geteuid() || (st.st_mode & 077) != 0) {
      unsafe_shard = true;
      return UniqueFd();
    }
    return fd;
  }

  std::optional<CompileResult> read_disk(const CacheKey& key, bool& corrupt) const {
    const std::string hex = key.hex();
    bool unsafe_shard = false;
    const UniqueFd shard = open_shard(hex.substr(0, 2), false, unsafe_shard);
    if (!shard) {
      corrupt = unsafe_shard;
      return std::nullopt;
    }
    const std::string name = hex + ".bin";
    UniqueFd fd(::openat(shard.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
      corrupt = errno == ELOOP;
      return std::nullopt;
    }
    corrupt = true;
    auto reject = [&] {
      ::unlinkat(shard.get(), name.c_str(), 0);  // the next store of this key writes a good one
      return std::nullopt;
    };
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || st.st_uid != ::geteuid()) return reject();
    const std::optional<std::string> data = detail::read_regular(fd.get(), max_entry_bytes() + k_entry_overhead);
    if (!data || data->size() < k_entry_overhead) return reject();
    const std::string_view v(*data);
    const std::string_view body = v.substr(0, v.size() - 32);
    Digest mac{};
    std::memcpy(mac.data(), v.data() + body.size(), mac.size());
    if (!equal_digests(hmac_sha256(mac_key, body), mac)) return reject();
    if (!body.starts_with(k_file_magic)) return reject();
    if (std::memcmp(body.data() + k_file_magic.size(), key.digest.data(), 32) != 0) return reject();
    std::optional<CompileResult> r = detail::decode_result(body.substr(k_file_magic.size() + 32));
    if (!r || !cacheable(*r)) return reject();
    const timespec t[2] = {now_realtime(), now_realtime()};
    ::futimens(fd.get(), t);  // the entry was used: it moves to the young end of the disk LRU
    corrupt = false;
    return r;
  }

  void write_disk(const CacheKey& key, const CompileResult& r) {
    std::string data(k_file_magic);
    data.append(reinterpret_cast<const char*>(key.digest.data()), key.digest.size());
    data += detail::encode_result(r);
    if (data.size() > max_entry_bytes() + k_entry_overhead - 32) {
      std::lock_guard lock(mutex);
      ++stats.disk_skipped;
      return;
    }
    const Digest mac = hmac_sha256(mac_key, data);
    data.append(reinterpret_cast<const char*>(mac.data()), mac.size());

    const std::string hex = key.hex();
    bool unsafe_shard = false;
    const UniqueFd shard = open_shard(hex.substr(0, 2), true, unsafe_shard);
    if (!shard) return;  // a cache that cannot write is still a correct cache
    const std::string name = hex + ".bin";
    // A name private to this process and call, in the same directory so rename stays atomic.
    const std::string tmp = ".tmp-" + hex.substr(0, 16) + "-" + std::to_string(::getpid()) + "-" + std::to_string(tmp_counter++);
    UniqueFd fd(::openat(shard.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd) return;
    const timespec t[2] = {now_realtime(), now_realtime()};
    const bool good = detail::write_all(fd.get(), data) && ::futimens(fd.get(), t) == 0;
    fd.reset();
    if (!good) {
      ::unlinkat(shard.get(), tmp.c_str(), 0);
      return;
    }
    std::lock_guard threads(disk_mutex);
    ::flock(usage_fd.get(), LOCK_EX);
    struct stat old {};
    const std::uint64_t replaced =
        ::fstatat(shard.get(), name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(old.st_mode) ? static_cast<std::uint64_t>(old.st_size) : 0;
    if (::renameat(shard.get(), tmp.c_str(), shard.get(), name.c_str()) != 0) {
      ::unlinkat(shard.get(), tmp.c_str(), 0);
    } else {
      std::optional<std::uint64_t> usage = read_usage();
      if (usage) usage = *usage + data.size() - std::min<std::uint64_t>(replaced, *usage + data.size());
      if (!usage || *usage > options.disk_bytes) usage = evict();
      write_usage(*usage);
    }
    ::flock(usage_fd.get(), LOCK_UN);
  }

  std::optional<std::uint64_t> read_usage() const {  // holds the flock
    unsigned char b[8];
    if (::pread(usage_fd.get(), b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) return std::nullopt;
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
    return v;
  }

  void write_usage(std::uint64_t v) const {  // holds the flock
    unsigned char b[8];
    for (unsigned char& c : b) {
      c = static_cast<unsigned char>(v & 0xFF);
      v >>= 8;
    }
    (void)!::pwrite(usage_fd.get(), b, sizeof b, 0);
  }

  // Counts every entry and removes the least recently used until the total is at most three
  // quarters of the budget (so the next scans are far apart). Temporary files a crashed writer left
  // behind over an hour ago go too. Holds the flock; returns the new total.
  std::uint64_t evict() {
    struct Found {
      timespec mtime;
      std::uint64_t size;
      int shard;  // index into shards
      std::string name;
    };
    std::vector<UniqueFd> shards;
    std::vector<Found> entries;
    std::uint64_t total = 0;
    const timespec now = now_realtime();
    for (const std::string& sn : detail::list_directory(dir_fd.get())) {
      if (!is_shard_name(sn)) continue;
      bool unsafe_shard = false;
      UniqueFd sfd = open_shard(sn, false, unsafe_shard);
      if (!sfd) continue;
      const int shard_index = static_cast<int>(shards.size());
      for (const std::string& n : detail::list_directory(sfd.get())) {
        struct stat st {};
        if (::fstatat(sfd.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (n.starts_with(".tmp-")) {
          // A write in flight is counted when it is renamed into place; one a crashed writer left goes.
          if (now.tv_sec - st.st_mtim.tv_sec > 3600) ::unlinkat(sfd.get(), n.c_str(), 0);
          continue;
        }
        if (!S_ISREG(st.st_mode)) continue;
        total += static_cast<std::uint64_t>(st.st_size);
        entries.push_back({st.st_mtim, static_cast<std::uint64_t>(st.st_size), shard_index, n});
      }
      shards.push_back(std::move(sfd));
    }
    const std::uint64_t low_water = options.disk_bytes / 4 * 3;
    if (total <= options.disk_bytes) return total;
    std::sort(entries.begin(), entries.end(), [](const Found& a, const Found& b) {
      return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec : a.mtime.tv_nsec < b.mtime.tv_nsec;
    });
    std::uint64_t removed = 0;
    for (const Found& f : entries) {
      if (total <= low_water) break;
      if (::unlinkat(shards[static_cast<std::size_t>(f.shard)].get(), f.name.c_str(), 0) == 0) ++removed;
      total -= f.size;  // gone, by us or by another process
    }
    std::lock_guard lock(mutex);
    stats.disk_evictions += removed;
    return total;
  }

  std::filesystem::path entry_path(const CacheKey& key) const {
    const std::string hex = key.hex();
    return *options.directory / hex.substr(0, 2) / (hex + ".bin");
  }
};

CompileCache::CompileCache(CacheOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  if (impl_->options.directory) {
    if (impl_->options.disk_bytes < k_min_cache_disk_bytes) {
      throw std::invalid_argument("leap::sandbox: CacheOptions::disk_bytes = " + std::to_string(impl_->options.disk_bytes) +
                                  " is below the minimum of " + std::to_string(k_min_cache_disk_bytes) + " bytes");
    }
    impl_->open_directory();
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
    std::optional<CompileResult> r = impl_->read_disk(key, corrupt);
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
  CompileResult kept = result;
  kept.kernels.reset();  // derived from the CUBIN on every answer
  {
    std::lock_guard lock(impl_->mutex);
    impl_->insert_memory(key.digest, kept);
    ++impl_->stats.stores;
  }
  if (impl_->options.directory) impl_->write_disk(key, kept);
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

std::uint64_t CompileCache::disk_usage() const {
  if (!impl_->options.directory) return 0;
  std::lock_guard threads(impl_->disk_mutex);
  ::flock(impl_->usage_fd.get(), LOCK_SH);
  const std::optional<std::uint64_t> v = impl_->read_usage();
  ::flock(impl_->usage_fd.get(), LOCK_UN);
  return v.value_or(0);
}

}  // namespace leap::sandbox

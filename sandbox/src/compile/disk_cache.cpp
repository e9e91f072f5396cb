// SPDX-License-Identifier: Apache-2.0
#include "compile/disk_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "common/fd_io.hpp"
#include "common/key_file.hpp"
#include "common/sha256.hpp"
#include "compile/cacheable.hpp"
#include "compile/result_codec.hpp"

namespace leap::sandbox::detail {
namespace {

constexpr std::string_view k_file_magic = "LEAPSBX2";
constexpr const char* k_mac_key_file = "mac.key";
constexpr const char* k_usage_file = "usage";
constexpr std::size_t k_mac_key_bytes = 32;
constexpr std::size_t k_entry_overhead = k_file_magic.size() + 32 + 32;  // magic, key digest, MAC

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

DiskCache::DiskCache(std::filesystem::path directory, std::uint64_t budget_bytes)
    : directory_(std::move(directory)), budget_(budget_bytes) {
  open_directory();
}

void DiskCache::open_directory() {
  const std::filesystem::path& dir = directory_;
  std::error_code ec;
  if (dir.has_parent_path()) std::filesystem::create_directories(dir.parent_path(), ec);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    unsafe(dir, std::string("cannot be created: ") + std::strerror(errno));
  dir_fd_ = UniqueFd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir_fd_) {
    unsafe(dir, errno == ELOOP || errno == ENOTDIR ? "is a symlink or not a directory; give a real directory"
                                                   : std::string("cannot be opened: ") + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(dir_fd_.get(), &st) != 0) unsafe(dir, "cannot be examined");
  if (st.st_uid != ::geteuid()) unsafe(dir, "belongs to another user; give a directory of your own");
  if ((st.st_mode & 077) != 0 && ::fchmod(dir_fd_.get(), 0700) != 0)
    unsafe(dir, "is open to other users and cannot be made 0700");
  load_or_create_mac_key();
  usage_fd_ = UniqueFd(::openat(dir_fd_.get(), k_usage_file, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!usage_fd_) unsafe(dir, std::string("has an unusable usage file: ") + std::strerror(errno));
}

void DiskCache::load_or_create_mac_key() {
  std::string why;
  std::optional<std::string> key = load_or_create_key_file(dir_fd_.get(), k_mac_key_file, k_mac_key_bytes,
                                                           "remove it (the cache rebuilds itself)", why);
  if (!key) unsafe(directory_, why);
  mac_key_ = std::move(*key);
}

// The shard directory of an entry, opened without following a symlink; -1 when missing or unsafe.
UniqueFd DiskCache::open_shard(const std::string& shard, bool create, bool& unsafe_shard) const {
  if (create && ::mkdirat(dir_fd_.get(), shard.c_str(), 0700) != 0 && errno != EEXIST) return UniqueFd();
  UniqueFd fd(::openat(dir_fd_.get(), shard.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
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

std::optional<CompileResult> DiskCache::read(const CacheKey& key, bool& corrupt) const {
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
  const std::optional<std::string> data = read_regular(fd.get(), max_entry_bytes() + k_entry_overhead);
  if (!data || data->size() < k_entry_overhead) return reject();
  const std::string_view v(*data);
  const std::string_view body = v.substr(0, v.size() - 32);
  Digest mac{};
  std::memcpy(mac.data(), v.data() + body.size(), mac.size());
  if (!equal_digests(hmac_sha256(mac_key_, body), mac)) return reject();
  if (!body.starts_with(k_file_magic)) return reject();
  if (std::memcmp(body.data() + k_file_magic.size(), key.digest.data(), 32) != 0) return reject();
  std::optional<CompileResult> r = decode_result(body.substr(k_file_magic.size() + 32));
  if (!r || !cacheable(*r)) return reject();
  const timespec t[2] = {now_realtime(), now_realtime()};
  ::futimens(fd.get(), t);  // the entry was used: it moves to the young end of the disk LRU
  corrupt = false;
  return r;
}

DiskCache::Written DiskCache::write(const CacheKey& key, const CompileResult& r) {
  std::string data(k_file_magic);
  data.append(reinterpret_cast<const char*>(key.digest.data()), key.digest.size());
  data += encode_result(r);
  if (data.size() > max_entry_bytes() + k_entry_overhead - 32) return {.skipped = true};
  const Digest mac = hmac_sha256(mac_key_, data);
  data.append(reinterpret_cast<const char*>(mac.data()), mac.size());

  const std::string hex = key.hex();
  bool unsafe_shard = false;
  const UniqueFd shard = open_shard(hex.substr(0, 2), true, unsafe_shard);
  if (!shard) return {};  // a cache that cannot write is still a correct cache
  const std::string name = hex + ".bin";
  // A name private to this process and call, in the same directory so rename stays atomic.
  const std::string tmp =
      ".tmp-" + hex.substr(0, 16) + "-" + std::to_string(::getpid()) + "-" + std::to_string(tmp_counter_++);
  UniqueFd fd(::openat(shard.get(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return {};
  const timespec t[2] = {now_realtime(), now_realtime()};
  const bool good = write_all(fd.get(), data) && ::futimens(fd.get(), t) == 0;
  fd.reset();
  if (!good) {
    ::unlinkat(shard.get(), tmp.c_str(), 0);
    return {};
  }
  Written written;
  std::lock_guard threads(disk_mutex_);
  ::flock(usage_fd_.get(), LOCK_EX);
  struct stat old {};
  const std::uint64_t replaced =
      ::fstatat(shard.get(), name.c_str(), &old, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(old.st_mode)
          ? static_cast<std::uint64_t>(old.st_size)
          : 0;
  if (::renameat(shard.get(), tmp.c_str(), shard.get(), name.c_str()) != 0) {
    ::unlinkat(shard.get(), tmp.c_str(), 0);
  } else {
    std::optional<std::uint64_t> usage = read_usage();
    if (usage) usage = *usage + data.size() - std::min<std::uint64_t>(replaced, *usage + data.size());
    if (!usage || *usage > budget_) usage = evict(written.evicted);
    write_usage(*usage);
  }
  ::flock(usage_fd_.get(), LOCK_UN);
  return written;
}

std::optional<std::uint64_t> DiskCache::read_usage() const {  // holds the flock
  unsigned char b[8];
  if (::pread(usage_fd_.get(), b, sizeof b, 0) != static_cast<ssize_t>(sizeof b)) return std::nullopt;
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

void DiskCache::write_usage(std::uint64_t v) const {  // holds the flock
  unsigned char b[8];
  for (unsigned char& c : b) {
    c = static_cast<unsigned char>(v & 0xFF);
    v >>= 8;
  }
  (void)!::pwrite(usage_fd_.get(), b, sizeof b, 0);
}

// Counts every entry and removes the least recently used until the total is at most three
// quarters of the budget (so the next scans are far apart). Temporary files a crashed writer left
// behind over an hour ago go too. Holds the flock; returns the new total, and adds the entries it
// removed to `removed`.
std::uint64_t DiskCache::evict(std::uint64_t& removed) {
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
  for (const std::string& sn : list_directory(dir_fd_.get())) {
    if (!is_shard_name(sn)) continue;
    bool unsafe_shard = false;
    UniqueFd sfd = open_shard(sn, false, unsafe_shard);
    if (!sfd) continue;
    const int shard_index = static_cast<int>(shards.size());
    for (const std::string& n : list_directory(sfd.get())) {
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
  const std::uint64_t low_water = budget_ / 4 * 3;
  if (total <= budget_) return total;
  std::sort(entries.begin(), entries.end(), [](const Found& a, const Found& b) {
    return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec : a.mtime.tv_nsec < b.mtime.tv_nsec;
  });
  for (const Found& f : entries) {
    if (total <= low_water) break;
    if (::unlinkat(shards[static_cast<std::size_t>(f.shard)].get(), f.name.c_str(), 0) == 0) ++removed;
    total -= f.size;  // gone, by us or by another process
  }
  return total;
}

std::filesystem::path DiskCache::entry_path(const CacheKey& key) const {
  const std::string hex = key.hex();
  return directory_ / hex.substr(0, 2) / (hex + ".bin");
}

std::uint64_t DiskCache::usage() {
  std::lock_guard threads(disk_mutex_);
  ::flock(usage_fd_.get(), LOCK_SH);
  const std::optional<std::uint64_t> v = read_usage();
  ::flock(usage_fd_.get(), LOCK_UN);
  return v.value_or(0);
}

}  // namespace leap::sandbox::detail

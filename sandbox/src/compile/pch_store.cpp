// SPDX-License-Identifier: Apache-2.0
#include "compile/pch_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <vector>

#include "common/fd_io.hpp"
#include "common/key_file.hpp"
#include "common/little_endian.hpp"
#include "common/sha256.hpp"
#include "compile/nvrtc_compile.hpp"

namespace leap::sandbox::detail {
namespace {

constexpr std::string_view k_record_magic = "LEAPPCH1";
constexpr std::size_t k_mac_key_bytes = 32;

[[noreturn]] void unsafe(const std::filesystem::path& dir, const std::string& why) {
  throw std::runtime_error("leap::sandbox: the PCH directory " + dir.string() + " " + why);
}

// A directory of the user's own, 0700, opened without following a symlink.
int open_private_dir(int at, const char* name, const std::filesystem::path& shown) {
  if (::mkdirat(at, name, 0700) != 0 && errno != EEXIST)
    unsafe(shown, std::string("cannot be created: ") + std::strerror(errno));
  const int fd = ::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    unsafe(shown, errno == ELOOP || errno == ENOTDIR ? "is a symlink or not a directory"
                                                     : std::string("cannot be opened: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_uid != ::geteuid()) {
    ::close(fd);
    unsafe(shown, "belongs to another user; give a directory of your own");
  }
  if ((st.st_mode & 077) != 0 && ::fchmod(fd, 0700) != 0) {
    ::close(fd);
    unsafe(shown, "is open to other users and cannot be made 0700");
  }
  return fd;
}

bool is_key(std::string_view k) {
  return k.size() == 64 &&
         std::all_of(k.begin(), k.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::int64_t now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// A use record: the count as it stood at the last use, and when that was (ns since the epoch).
struct Uses {
  double count = 0;
  std::int64_t last_ns = 0;
  double now(std::int64_t at) const {
    const double hours = static_cast<double>(std::max<std::int64_t>(at - last_ns, 0)) / 3.6e12;
    return count * std::exp2(-hours / static_cast<double>(k_use_half_life.count()));
  }
};

std::optional<Uses> read_uses(int fd) {
  char buf[16];
  if (::pread(fd, buf, sizeof buf, 0) != static_cast<ssize_t>(sizeof buf)) return std::nullopt;
  std::string_view in(buf, sizeof buf);
  unsigned long long bits = 0, last = 0;
  if (!get_u64(in, bits) || !get_u64(in, last)) return std::nullopt;
  Uses u;
  std::memcpy(&u.count, &bits, sizeof bits);
  u.last_ns = static_cast<std::int64_t>(last);
  if (!std::isfinite(u.count) || u.count < 0) return std::nullopt;
  return u;
}

}  // namespace

std::string stored_pch_key(const NvrtcRequest& request, const std::string& prefix, const std::string& toolkit,
                           std::uintptr_t heap_address, std::uint64_t heap_bytes) {
  std::string framed;
  put_bytes(framed, "leap-sandbox/stored-pch/v1");
  put_bytes(framed, toolkit);
  put_u64(framed, heap_address);
  put_u64(framed, heap_bytes);
  put_u64(framed, request.flags.size());
  for (const std::string& f : request.flags) put_bytes(framed, f);
  put_u64(framed, request.headers.size());
  for (const Header& h : request.headers) {
    put_bytes(framed, h.name);
    put_bytes(framed, h.content);
  }
  put_bytes(framed, prefix);
  return to_hex(sha256(framed));
}

PchStore::Lock::Lock(std::mutex& threads, int fd) noexcept : threads_(threads), fd_(fd) {
  while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {}
}
PchStore::Lock::~Lock() { ::flock(fd_, LOCK_UN); }

PchStore::PchStore(const std::filesystem::path& directory, std::uint64_t budget_bytes)
    : dir_(directory), budget_(budget_bytes) {
  std::error_code ec;
  if (dir_.has_parent_path()) std::filesystem::create_directories(dir_.parent_path(), ec);
  dir_fd_ = open_private_dir(AT_FDCWD, dir_.c_str(), dir_);
  files_fd_ = open_private_dir(dir_fd_, "files", dir_ / "files");
  records_fd_ = open_private_dir(dir_fd_, "records", dir_ / "records");
  uses_fd_ = open_private_dir(dir_fd_, "uses", dir_ / "uses");
  incoming_fd_ = open_private_dir(dir_fd_, "incoming", dir_ / "incoming");
  lock_fd_ = ::openat(dir_fd_, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) unsafe(dir_, std::string("has an unusable lock file: ") + std::strerror(errno));
  const std::filesystem::path files = std::filesystem::canonical(dir_ / "files", ec);
  if (ec) unsafe(dir_, "cannot be resolved");
  files_dir_ = files.string();
  std::string why;
  std::optional<std::string> key =
      load_or_create_key_file(dir_fd_, "mac.key", k_mac_key_bytes, "remove the directory (it rebuilds itself)", why);
  if (!key) unsafe(dir_, why);
  mac_key_ = std::move(*key);
}

PchStore::~PchStore() {
  for (int fd : {dir_fd_, files_fd_, records_fd_, uses_fd_, incoming_fd_, lock_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

PchStore::Lock PchStore::lock() const { return Lock(lock_threads_, lock_fd_); }

std::string PchStore::record_bytes(const std::string& key, const struct ::stat& st) const {
  std::string body(k_record_magic);
  put_bytes(body, key);
  for (const unsigned long long v :
       {static_cast<unsigned long long>(st.st_dev), static_cast<unsigned long long>(st.st_ino),
        static_cast<unsigned long long>(st.st_size), static_cast<unsigned long long>(st.st_ctim.tv_sec),
        static_cast<unsigned long long>(st.st_ctim.tv_nsec), static_cast<unsigned long long>(st.st_mtim.tv_sec),
        static_cast<unsigned long long>(st.st_mtim.tv_nsec)}) {
    put_u64(body, v);
  }
  const Digest mac = hmac_sha256(mac_key_, body);
  body.append(reinterpret_cast<const char*>(mac.data()), mac.size());
  return body;
}

void PchStore::remove_entry(const std::string& key) const noexcept {
  ::unlinkat(records_fd_, (key + ".rec").c_str(), 0);
  ::unlinkat(files_fd_, (key + ".pch").c_str(), 0);
  ::unlinkat(uses_fd_, key.c_str(), 0);
}

// One more use, now. Not under the store's lock: two processes that count at once may lose one count,
// which changes nothing that matters.
void PchStore::note_use(const std::string& key) const noexcept {
  const int fd = ::openat(uses_fd_, key.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const std::int64_t now = now_ns();
  const Uses before = read_uses(fd).value_or(Uses{0, now});
  const double count = before.now(now) + 1;
  unsigned long long bits = 0;
  std::memcpy(&bits, &count, sizeof bits);
  std::string out;
  put_u64(out, bits);
  put_u64(out, static_cast<unsigned long long>(now));
  (void)!::pwrite(fd, out.data(), out.size(), 0);
  ::close(fd);
}

double PchStore::use_score(const std::string& key) const {
  if (!is_key(key)) return 0;
  const int fd = ::openat(uses_fd_, key.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return 0;
  const std::optional<Uses> u = read_uses(fd);
  ::close(fd);
  return u ? u->now(now_ns()) : 0;
}

std::optional<std::string> PchStore::find(const std::string& key, bool* refused) const {
  if (refused != nullptr) *refused = false;
  if (!is_key(key)) return std::nullopt;
  const std::string file = key + ".pch";
  const int fd = ::openat(files_fd_, file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) remove_entry(key);
    if (refused != nullptr) *refused = errno == ELOOP;
    return std::nullopt;
  }
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid();
  ::close(fd);
  const int rfd = ::openat(records_fd_, (key + ".rec").c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  std::optional<std::string> record = rfd >= 0 ? read_regular(rfd, 4096) : std::nullopt;
  if (!stat_ok || !record || *record != record_bytes(key, st)) {
    if (rfd >= 0) ::close(rfd);
    remove_entry(key);  // the next compile of this prefix makes a good one
    if (refused != nullptr) *refused = true;
    return std::nullopt;
  }
  ::close(rfd);
  note_use(key);  // (the PCH file itself is not touched: its ctime is part of the record)
  return files_dir_ + "/" + file;
}

std::string PchStore::make_incoming() const {
  std::string path = (dir_ / "incoming" / "create-XXXXXX").string();
  if (::mkdtemp(path.data()) == nullptr)
    throw std::runtime_error("leap::sandbox: cannot make a directory in " + (dir_ / "incoming").string());
  return std::filesystem::canonical(path).string();
}

void PchStore::remove_incoming(const std::string& dir) const noexcept {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

std::optional<std::string> PchStore::adopt(const std::string& key, const std::string& file) {
  struct stat st {};
  if (!is_key(key) || ::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return std::nullopt;
  if (static_cast<std::uint64_t>(st.st_size) > budget_) {
    ::unlink(file.c_str());
    return std::nullopt;
  }
  const std::string name = key + ".pch";
  ::chmod(file.c_str(), 0600);
  if (::rename(file.c_str(), (files_dir_ + "/" + name).c_str()) != 0) return std::nullopt;
  const int fd = ::openat(files_fd_, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const bool ok = ::fstat(fd, &st) == 0;  // after the rename, which changed the ctime
  ::close(fd);
  if (!ok) return std::nullopt;
  const std::string record = record_bytes(key, st);
  const std::string tmp = ".tmp-" + key.substr(0, 16) + "-" + std::to_string(::getpid());
  const int out = ::openat(records_fd_, tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  const bool written = out >= 0 && write_all(out, record);
  if (out >= 0) ::close(out);
  if (!written || ::renameat(records_fd_, tmp.c_str(), records_fd_, (key + ".rec").c_str()) != 0) {
    ::unlinkat(records_fd_, tmp.c_str(), 0);
    remove_entry(key);
    return std::nullopt;
  }
  note_use(key);  // made for the compile that asked for it
  evict(key);
  return files_dir_ + "/" + name;
}

std::uint64_t PchStore::stored_bytes() const {
  std::uint64_t total = 0;
  for (const std::string& n : list_directory(files_fd_)) {
    struct stat st {};
    if (::fstatat(files_fd_, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
      total += static_cast<std::uint64_t>(st.st_size);
  }
  return total;
}

// With the lock held. Files without a record (a creator that died between rename and record) and
// creators' directories over an hour old go too.
void PchStore::evict(const std::string& keep) {
  struct Entry {
    double score;
    std::int64_t last_ns;
    std::uint64_t bytes;
    std::string key;
  };
  const std::int64_t now = now_ns();
  std::vector<Entry> entries;
  std::uint64_t total = 0;
  for (const std::string& n : list_directory(files_fd_)) {
    struct stat st {
    }, rec{};
    if (::fstatat(files_fd_, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    const std::string key = n.size() > 4 && n.ends_with(".pch") ? n.substr(0, n.size() - 4) : "";
    if (!is_key(key) || ::fstatat(records_fd_, (key + ".rec").c_str(), &rec, AT_SYMLINK_NOFOLLOW) != 0) {
      ::unlinkat(files_fd_, n.c_str(), 0);
      continue;
    }
    total += static_cast<std::uint64_t>(st.st_size);
    // No use record (lost, or made by an older version): never used, as old as its record.
    Uses uses{0, static_cast<std::int64_t>(rec.st_mtim.tv_sec) * 1'000'000'000 + rec.st_mtim.tv_nsec};
    const int fd = ::openat(uses_fd_, key.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      if (const std::optional<Uses> u = read_uses(fd)) uses = *u;
      ::close(fd);
    }
    entries.push_back({uses.now(now), uses.last_ns, static_cast<std::uint64_t>(st.st_size), key});
  }
  for (const std::string& n : list_directory(uses_fd_)) {  // counts whose PCH is gone
    struct stat st {};
    if (!is_key(n) || ::fstatat(files_fd_, (n + ".pch").c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      ::unlinkat(uses_fd_, n.c_str(), 0);
  }
  for (const std::string& n : list_directory(incoming_fd_)) {
    struct stat st {};
    if (::fstatat(incoming_fd_, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        now / 1'000'000'000 - st.st_mtim.tv_sec > 3600) {
      remove_incoming((dir_ / "incoming" / n).string());
    }
  }
  if (total <= budget_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.score != b.score ? a.score < b.score : a.last_ns < b.last_ns;
  });
  for (const Entry& e : entries) {
    if (total <= budget_) break;  // creations are rare, so each one may scan: no low-water mark needed
    if (e.key == keep) continue;
    remove_entry(e.key);
    total -= e.bytes;
    ++evictions_;
  }
}

}  // namespace leap::sandbox::detail

// SPDX-License-Identifier: Apache-2.0
// Precompiled headers kept on disk and shared by every Compiler on the machine that names the same
// directory: the CLI's one-shot compiles, serve's pooled compilers and fleet workers.
//
// Layout of the directory (0700, the user's own, never followed through a symlink):
//   mac.key            32 random bytes, 0600: authenticates the records
//   files/<key>.pch    the PCH files; bound read-only into compile processes, nothing else is
//   records/<key>.rec  per file: its device, inode, size, ctime and mtime, and an HMAC over them and the key
//   uses/<key>         per file: how much it is used (a count that halves every hour unused) and when last
//   incoming/          one fresh directory per creation, where a creator process writes (same file system,
//                      so the finished file is renamed into files/ atomically)
//   lock               flock'ed while a PCH is created and the budget kept
//
// Authentication without rereading the file. A PCH is 20 to 180 MB; hashing it on every compile would
// cost as much as the PCH saves. The record is written by the trusted parent right after the file is
// renamed into place, and binds the key to the file's identity: a file edited later has a new ctime
// (which no unprivileged call sets back), a file replaced or planted has another inode, a truncated
// one another size, and a record copied from another store or machine fails its HMAC. What does not
// match is refused and removed; the compile goes on without a PCH.
//
// Budget: the files' bytes, at most `budget_bytes`; once a new PCH takes the total over the budget, the
// least used go first: each use adds one to a PCH's count, which halves every hour (k_use_half_life),
// and among equal counts the one used longest ago goes first. So PCHs that many compiles use are not
// pushed out by a stream of PCHs made once each (every one of which cost its maker's CPU limit, see
// compiler.cpp), and a PCH nobody uses any more fades out. One PCH larger than the whole budget is not
// kept.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

namespace leap::sandbox::detail {

class PchStore {
 public:
  // Throws std::runtime_error when the directory cannot be made safe (as CompileCache).
  PchStore(const std::filesystem::path& directory, std::uint64_t budget_bytes);
  ~PchStore();
  PchStore(const PchStore&) = delete;
  PchStore& operator=(const PchStore&) = delete;

  const std::string& files_dir() const noexcept { return files_dir_; }  // canonical path
  const std::string& secret() const noexcept { return mac_key_; }
  std::uint64_t budget_bytes() const noexcept { return budget_; }

  // The path of the authenticated PCH for `key` (hex), or nullopt: none, or one that fails its record
  // (then removed, and `refused` set).
  std::optional<std::string> find(const std::string& key, bool* refused = nullptr) const;
  // Holds the store's lock: one creation at a time on the machine, so N pooled compilers that miss together
  // create a PCH once.
  class Lock {
   public:
    Lock(std::mutex& threads, int fd) noexcept;
    ~Lock();
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;

   private:
    std::unique_lock<std::mutex> threads_;  // flock does not exclude threads sharing one descriptor
    int fd_;
  };
  Lock lock() const;
  // A fresh empty directory for one creator (a host path); remove with remove_incoming.
  std::string make_incoming() const;
  void remove_incoming(const std::string& dir) const noexcept;
  // With the lock held: renames `file` into place as the PCH of `key`, writes its record, keeps the
  // budget. Returns the stored path, or nullopt (larger than the budget, or the disk refused).
  std::optional<std::string> adopt(const std::string& key, const std::string& file);
  std::uint64_t stored_bytes() const;  // the files' total
  std::uint64_t evictions() const noexcept { return evictions_; }
  // How much `key` is used now: its count of uses, halved for every k_use_half_life since the last; 0
  // for none.
  double use_score(const std::string& key) const;

 private:
  std::string record_bytes(const std::string& key, const struct ::stat& st) const;
  void remove_entry(const std::string& key) const noexcept;
  void note_use(const std::string& key) const noexcept;
  void evict(const std::string& keep);
  std::filesystem::path dir_;
  std::string files_dir_;
  std::string mac_key_;
  std::uint64_t budget_;
  int dir_fd_ = -1, files_fd_ = -1, records_fd_ = -1, uses_fd_ = -1, incoming_fd_ = -1, lock_fd_ = -1;
  std::uint64_t evictions_ = 0;
  mutable std::mutex lock_threads_;
};

// Half-life of a PCH's use count (see Budget above).
inline constexpr std::chrono::hours k_use_half_life{1};

// The key of the PCH made from `prefix` (pch_prefix_text of a source's leading includes,
// leading_includes.hpp): everything the PCH's content depends on. The toolkit (its version, and its
// include directories in the flags), every option (-D, the architecture, the dialect...), the
// in-memory headers' names and contents, the prefix, and the heap address and size the PCH is bound
// to. A candidate's other text never reaches the PCH, so it is not in the key.
struct NvrtcRequest;
std::string stored_pch_key(const NvrtcRequest& request, const std::string& prefix, const std::string& toolkit,
                           std::uintptr_t heap_address, std::uint64_t heap_bytes);

}  // namespace leap::sandbox::detail

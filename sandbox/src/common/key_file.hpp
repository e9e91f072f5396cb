// SPDX-License-Identifier: Apache-2.0
// Key files: the one reader of every file that holds a key (the fleet key, the MAC keys of the compile
// cache and of the stored PCHs), and the maker of a private directory's MAC key.
//
// A key file is held to these rules, in this order (docs/fleet.md spells them out for the Python
// client, which matches them):
//   1. it is looked at (stat) before it is opened, and opened read-only without blocking (O_NONBLOCK:
//      a FIFO cannot stall the reader) and without becoming a controlling terminal; a symbolic link is
//      followed where the rules say so, refused otherwise (O_NOFOLLOW)
//   2. what was opened is a regular file (fstat), not a FIFO, directory, device or socket
//   3. its owner is the reader's effective user: another user could read or replace it
//   4. neither group nor others have any permission on it (mode & 0077 == 0; with a POSIX ACL, its
//      mask shows in the group bits)
//   5. it holds at most `max_bytes`, both as fstat says and as read (a file growing meanwhile is
//      caught, never read past the bound)
// Every refusal is one type, KeyFileError, whose message names the file, what is wrong and the fix.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace leap::sandbox::detail {

struct KeyFileRules {
  std::string_view label = "the key file";  // how a message names the file: "the fleet key file"
  std::size_t max_bytes = 4096;             // the most the file may hold
  bool follow_symlinks = true;              // false: a symbolic link in the file's place is refused
  std::string_view how_to_make;             // the fix for a file that does not exist (empty: none given)
};

// Why a key file is refused. what() is "<label> <path> <problem>; <fix>".
class KeyFileError : public std::runtime_error {
 public:
  KeyFileError(std::string_view label, std::string path, std::string problem, std::string fix);
  const std::string& path() const noexcept { return path_; }
  const std::string& problem() const noexcept { return problem_; }  // "is owned by uid 7, not ..."
  const std::string& fix() const noexcept { return fix_; }          // "chown 0 /etc/leap/fleet.key ..."

 private:
  std::string path_, problem_, fix_;
};

// Reads the key file `path` (relative to `dir_fd`, or AT_FDCWD) under `rules` into `buffer`, which
// holds `capacity` bytes, at least rules.max_bytes + 1. Returns how many bytes it holds; throws
// KeyFileError for any refusal and any failure to read.
std::size_t read_key_file(int dir_fd, const std::string& path, const KeyFileRules& rules, char* buffer,
                          std::size_t capacity);

// The file `name` in `dir_fd`, `bytes` random bytes, a 0600 regular file of this user's (read by the
// rules above, a symbolic link refused). Made when missing: written whole to a private name, then
// linked into place, so a second process either wins the link or reads the winner's complete key.
// nullopt, with `why` in words that follow the directory's name ("has a MAC key file mac.key that is
// owned by uid 7, ..."), when it cannot be made or read or is not such a file; a file of the wrong
// kind gets `remedy` after the why.
std::optional<std::string> load_or_create_key_file(int dir_fd, const char* name, std::size_t bytes,
                                                   std::string_view remedy, std::string& why);

}  // namespace leap::sandbox::detail

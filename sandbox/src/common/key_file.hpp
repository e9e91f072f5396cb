// SPDX-License-Identifier: Apache-2.0
// The MAC key of a private directory (the compile cache's, the stored PCHs'), made once and then
// read by every process that uses the directory.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace leap::sandbox::detail {

// The file `name` in `dir_fd`, `bytes` random bytes, a 0600 regular file of this user's. Made when
// missing: written whole to a private name, then linked into place, so a second process either wins the
// link or reads the winner's complete key. nullopt, with `why` in words that follow the directory's name
// ("has an unreadable MAC key file mac.key"), when it cannot be made or read or is not such a file; a
// file of the wrong kind gets `remedy` after the why.
std::optional<std::string> load_or_create_key_file(int dir_fd, const char* name, std::size_t bytes,
                                                   std::string_view remedy, std::string& why);

}  // namespace leap::sandbox::detail

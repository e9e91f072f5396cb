// SPDX-License-Identifier: Apache-2.0
// sandbox/src/common: small pieces with no policy of their own that several concerns use: SHA-256
// and HMAC (sha256), descriptor I/O and directory listings (fd_io.cpp), and this header, which
// declares the internals shared between the library's sources: the fd I/O, and helpers defined by
// compile/compile_options.cpp (flags, encodings) and evaluation/driver_probe.cpp (the probe).
// Not here: anything that decides what to compile, confine, run or answer. Not installed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "leap/sandbox/compile_options.hpp"
#include "leap/sandbox/compile_result.hpp"
#include "leap/sandbox/driver_probe.hpp"

namespace leap::sandbox::detail {

// NVRTC flags for the options, in a fixed order; no host paths (the include dirs are added later),
// so the list doubles as the options' canonical form in the cache key.
std::vector<std::string> nvrtc_flags(const CompileOptions& options);
bool arch_is_sm(std::string_view arch) noexcept;

// A self-delimiting binary form of a result (status, log, ptx, cubin, lowered names, seconds).
std::string encode_result(const CompileResult& result);
std::optional<CompileResult> decode_result(std::string_view bytes);

// Writes all of `data` to `fd`, retrying short writes and EINTR; false on any other failure. Only
// write(2) is called, so a forked child may use it before it execs or exits.
bool write_all(int fd, std::string_view data);
// Reads the whole of `fd`, a regular file of at most `limit` bytes (as fstat says when it starts);
// nullopt for anything else, a read error, or a file that shrank while read.
std::optional<std::string> read_regular(int fd, std::size_t limit);
// The names in a directory (without "." and ".."); empty when it cannot be read.
std::vector<std::string> list_directory(int dir_fd);
// The MAC key of a private directory (the compile cache's, the stored PCHs'): the file `name` in
// `dir_fd`, `bytes` random bytes, a 0600 regular file of this user's. Made when missing: written whole
// to a private name, then linked into place, so a second process either wins the link or reads the
// winner's complete key. nullopt, with `why` in words that follow the directory's name ("has an
// unreadable MAC key file mac.key"), when it cannot be made or read or is not such a file; a file of
// the wrong kind gets `remedy` after the why.
std::optional<std::string> load_or_create_key_file(int dir_fd, const char* name, std::size_t bytes,
                                                   std::string_view remedy, std::string& why);

// Little-endian fixed-width helpers.
void put_u64(std::string& out, unsigned long long v);
bool get_u64(std::string_view& in, unsigned long long& v);
void put_bytes(std::string& out, std::string_view bytes);  // length-prefixed
bool get_bytes(std::string_view& in, std::string& bytes);

// The driver probe: loads `library`, calls cuInit and lists devices as "key value" lines (in the
// process that runs it: the worker program, or a forked child where the program is missing).
std::string probe_driver_here(const std::string& library);
GpuStatus parse_driver_probe(const std::string& text);

}  // namespace leap::sandbox::detail

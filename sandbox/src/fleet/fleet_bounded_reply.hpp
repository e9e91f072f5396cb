// SPDX-License-Identifier: Apache-2.0
// A Redis reply (RESP2) read with bounded memory. Anyone who can write to the fleet's streams can add
// an entry of hundreds of MB; hiredis keeps a reply whole (and copies it), so a member reading one
// would hold it several times over. This reader streams the bytes instead: a string longer than
// `max_value_bytes` keeps only its first `oversized_prefix_bytes` (its length is known before its
// bytes arrive), all strings together keep at most `max_kept_bytes`, and at most `max_elements` array
// elements are kept; the rest is read off the socket and dropped, counted (`length`) and hashed
// (`digest`), so the caller can still check a tag over a value it never held.
#pragma once

#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/sha256.hpp"

namespace leap::sandbox::fleet {

struct BoundedLimits {
  std::size_t max_value_bytes = std::size_t{4} << 20;  // a longer string is oversized
  std::size_t oversized_prefix_bytes = 256;            // kept of an oversized string
  std::size_t max_kept_bytes = std::size_t{8} << 20;   // kept of all strings of one reply
  std::size_t max_elements = 4096;                     // array elements kept in one reply, at any depth
  std::size_t max_line_bytes = 1 << 16;                // a status, error or length line
};

struct BoundedReply {
  enum class Type { nil, string, status, error, integer, array };
  Type type = Type::nil;
  std::string text;        // the kept start of a string, status or error
  std::size_t length = 0;  // a string's full length; an array's full element count
  Digest digest{};         // SHA-256 of a string's full bytes
  long long integer = 0;
  std::vector<BoundedReply> elements;  // the kept elements (fewer than `length` when some were dropped)

  bool whole() const noexcept {
    return type == Type::array ? elements.size() == length : text.size() == length || type != Type::string;
  }
};

// The input is not RESP2 (or nests deeper than any fleet command's reply).
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class BoundedReader {
 public:
  // Reads up to `size` bytes into `buffer` and returns how many (at least 1); throws when it cannot.
  using Source = std::function<std::size_t(char* buffer, std::size_t size)>;

  BoundedReader(Source source, BoundedLimits limits) : source_(std::move(source)), limits_(limits) {}

  // Exactly one reply: it asks the source for no byte past the reply's end.
  BoundedReply read();

 private:
  BoundedReply value(int depth);
  std::string line();
  void fill();
  char next();
  void skip_crlf();

  Source source_;
  BoundedLimits limits_;
  std::vector<char> buffer_ = std::vector<char>(1 << 16);
  std::size_t pos_ = 0, end_ = 0;
  std::size_t kept_bytes_ = 0, kept_elements_ = 0;
};

}  // namespace leap::sandbox::fleet

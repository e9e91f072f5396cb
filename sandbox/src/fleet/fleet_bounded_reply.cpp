// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_bounded_reply.hpp"

#include <algorithm>
#include <charconv>

namespace leap::sandbox::fleet {
namespace {

constexpr int k_max_depth = 8;  // XREADGROUP's reply nests 5 deep

long long to_number(const std::string& s, const char* what) {
  long long v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) {
    throw ProtocolError(std::string("Redis sent a malformed ") + what + " '" + s.substr(0, 32) + "'");
  }
  return v;
}

}  // namespace

void BoundedReader::fill() {
  // Only called when the reply needs more bytes, so a read never waits for bytes past its end.
  pos_ = 0;
  end_ = source_(buffer_.data(), buffer_.size());
  if (end_ == 0 || end_ > buffer_.size()) throw ProtocolError("the reply's source returned no bytes");
}

char BoundedReader::next() {
  if (pos_ == end_) fill();
  return buffer_[pos_++];
}

std::string BoundedReader::line() {
  std::string out;
  for (;;) {
    const char c = next();
    if (c == '\r') {
      if (next() != '\n') throw ProtocolError("Redis sent a line without CRLF");
      return out;
    }
    if (out.size() >= limits_.max_line_bytes) throw ProtocolError("Redis sent a line longer than the reader's limit");
    out.push_back(c);
  }
}

void BoundedReader::skip_crlf() {
  if (next() != '\r' || next() != '\n') throw ProtocolError("Redis sent a string without its closing CRLF");
}

BoundedReply BoundedReader::value(int depth) {
  if (depth > k_max_depth) throw ProtocolError("Redis sent a reply nested deeper than any fleet command's");
  BoundedReply r;
  const char kind = next();
  switch (kind) {
    case '+':
    case '-':
      r.type = kind == '+' ? BoundedReply::Type::status : BoundedReply::Type::error;
      r.text = line();
      r.length = r.text.size();
      return r;
    case ':':
      r.type = BoundedReply::Type::integer;
      r.integer = to_number(line(), "integer");
      return r;
    case '$': {
      const long long n = to_number(line(), "string length");
      if (n < 0) return r;  // nil
      r.type = BoundedReply::Type::string;
      r.length = static_cast<std::size_t>(n);
      const std::size_t room = limits_.max_kept_bytes - std::min(kept_bytes_, limits_.max_kept_bytes);
      const std::size_t wanted = r.length > limits_.max_value_bytes ? limits_.oversized_prefix_bytes : r.length;
      const std::size_t keep = std::min({r.length, wanted, room});
      r.text.reserve(keep);
      Sha256 hash;
      for (std::size_t left = r.length; left > 0;) {
        if (pos_ == end_) fill();
        const std::size_t take = std::min(left, end_ - pos_);
        const char* chunk = buffer_.data() + pos_;
        hash.update(chunk, take);
        if (r.text.size() < keep) r.text.append(chunk, std::min(take, keep - r.text.size()));
        pos_ += take;
        left -= take;
      }
      kept_bytes_ += r.text.size();
      r.digest = hash.finish();
      skip_crlf();
      return r;
    }
    case '*': {
      const long long n = to_number(line(), "array length");
      if (n < 0) return r;  // nil array
      r.type = BoundedReply::Type::array;
      r.length = static_cast<std::size_t>(n);
      for (std::size_t i = 0; i < r.length; ++i) {
        // The slot is taken before the element is read, so outer arrays keep their place first.
        const bool keep = kept_elements_ < limits_.max_elements;
        if (keep) ++kept_elements_;
        BoundedReply element = value(depth + 1);
        if (keep) r.elements.push_back(std::move(element));
      }
      return r;
    }
    default: throw ProtocolError(std::string("Redis sent an unknown reply type '") + kind + "'");
  }
}

BoundedReply BoundedReader::read() {
  kept_bytes_ = 0;
  kept_elements_ = 0;
  return value(0);
}

}  // namespace leap::sandbox::fleet

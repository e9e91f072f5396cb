// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_auth.hpp"

#include <unistd.h>

#include <optional>
#include <random>

namespace leap::sandbox::fleet {
namespace {

void append_netstring(std::string& out, std::string_view part) {
  out += std::to_string(part.size());
  out += ':';
  out += part;
  out += ',';
}

int hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<Digest> from_hex(std::string_view hex) noexcept {
  if (hex.size() != 64) return std::nullopt;
  Digest d{};
  for (std::size_t i = 0; i < d.size(); ++i) {
    const int hi = hex_value(hex[2 * i]);
    const int lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    d[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return d;
}

}  // namespace

std::string signed_message(const SignedFields& f) {
  std::string m;
  m.reserve(160 + f.stream.size() + f.reply_stream.size() + f.session.size() + f.id.size());
  append_netstring(m, tag_version);
  append_netstring(m, f.kind == MessageKind::request ? "request" : "reply");
  append_netstring(m, f.stream);
  append_netstring(m, f.reply_stream);
  append_netstring(m, f.session);
  append_netstring(m, f.id);
  append_netstring(m, to_hex(f.line_digest));
  return m;
}

std::string sign(const FleetKey& key, const SignedFields& fields) {
  return to_hex(hmac_sha256(key.bytes(), signed_message(fields)));
}

bool verify(const FleetKey& key, const SignedFields& fields, std::string_view tag) {
  const std::optional<Digest> given = from_hex(tag);
  const Digest expected = hmac_sha256(key.bytes(), signed_message(fields));
  if (!given) return false;
  return equal_digests(*given, expected);
}

namespace {

std::string delivery_message(std::string_view stream, std::string_view entry_id, std::string_view request_tag,
                             std::string_view record) {
  std::string m;
  append_netstring(m, tag_version);
  append_netstring(m, "delivery");
  append_netstring(m, stream);
  append_netstring(m, entry_id);
  append_netstring(m, request_tag);
  append_netstring(m, record);
  return m;
}

}  // namespace

std::string delivery_tag(const FleetKey& key, std::string_view stream, std::string_view entry_id,
                         std::string_view request_tag, std::string_view record) {
  return to_hex(hmac_sha256(key.bytes(), delivery_message(stream, entry_id, request_tag, record)));
}

bool verify_delivery(const FleetKey& key, std::string_view stream, std::string_view entry_id,
                     std::string_view request_tag, std::string_view record, std::string_view tag) {
  const std::optional<Digest> given = from_hex(tag);
  const Digest expected = hmac_sha256(key.bytes(), delivery_message(stream, entry_id, request_tag, record));
  if (!given) return false;
  return equal_digests(*given, expected);
}

std::string random_hex(std::size_t digits) {
  std::random_device random;
  static constexpr char hex[] = "0123456789abcdef";
  std::string out(digits, '0');
  std::uint32_t r = 0;
  for (std::size_t i = 0; i < digits; ++i, r >>= 4) {
    if (i % 8 == 0) r = random();
    out[i] = hex[r & 0xF];
  }
  return out;
}

std::string new_session() { return std::to_string(::getpid()) + "-" + random_hex(32); }

}  // namespace leap::sandbox::fleet

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

std::string new_session() {
  std::random_device random;
  static constexpr char digits[] = "0123456789abcdef";
  std::string nonce(32, '0');
  for (std::size_t i = 0; i < nonce.size(); i += 8) {
    std::uint32_t r = random();
    for (std::size_t k = 0; k < 8; ++k, r >>= 4) nonce[i + k] = digits[r & 0xF];
  }
  return std::to_string(::getpid()) + "-" + nonce;
}

}  // namespace leap::sandbox::fleet

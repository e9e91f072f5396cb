// SPDX-License-Identifier: Apache-2.0
// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), used for cache keys and cache-entry MACs.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace leap::sandbox {

using Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256() noexcept;
  Sha256& update(const void* data, std::size_t size) noexcept;
  Sha256& update(std::string_view bytes) noexcept { return update(bytes.data(), bytes.size()); }
  Digest finish() noexcept;  // the object is reset afterwards

 private:
  void block(const std::uint8_t* p) noexcept;
  std::array<std::uint32_t, 8> h_{};
  std::array<std::uint8_t, 64> buf_{};
  std::size_t used_ = 0;
  std::uint64_t total_ = 0;
};

Digest sha256(std::string_view bytes) noexcept;
// HMAC-SHA256 of `message` under `key` (a key longer than 64 bytes is hashed first, as RFC 2104 says).
Digest hmac_sha256(std::string_view key, std::string_view message) noexcept;
// Compares in time that depends only on the length, so a MAC check leaks nothing about where it differs.
bool equal_digests(const Digest& a, const Digest& b) noexcept;
std::string to_hex(const Digest& digest);

}  // namespace leap::sandbox

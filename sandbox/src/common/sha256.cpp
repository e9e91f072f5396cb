// SPDX-License-Identifier: Apache-2.0
#include "common/sha256.hpp"

#include <algorithm>
#include <cstring>

namespace leap::sandbox {
namespace {

constexpr std::array<std::uint32_t, 64> k_round = {
    0x428a2f98u, 0x71374491u, 0xb5c0fbcfu, 0xe9b5dba5u, 0x3956c25bu, 0x59f111f1u, 0x923f82a4u, 0xab1c5ed5u,
    0xd807aa98u, 0x12835b01u, 0x243185beu, 0x550c7dc3u, 0x72be5d74u, 0x80deb1feu, 0x9bdc06a7u, 0xc19bf174u,
    0xe49b69c1u, 0xefbe4786u, 0x0fc19dc6u, 0x240ca1ccu, 0x2de92c6fu, 0x4a7484aau, 0x5cb0a9dcu, 0x76f988dau,
    0x983e5152u, 0xa831c66du, 0xb00327c8u, 0xbf597fc7u, 0xc6e00bf3u, 0xd5a79147u, 0x06ca6351u, 0x14292967u,
    0x27b70a85u, 0x2e1b2138u, 0x4d2c6dfcu, 0x53380d13u, 0x650a7354u, 0x766a0abbu, 0x81c2c92eu, 0x92722c85u,
    0xa2bfe8a1u, 0xa81a664bu, 0xc24b8b70u, 0xc76c51a3u, 0xd192e819u, 0xd6990624u, 0xf40e3585u, 0x106aa070u,
    0x19a4c116u, 0x1e376c08u, 0x2748774cu, 0x34b0bcb5u, 0x391c0cb3u, 0x4ed8aa4au, 0x5b9cca4fu, 0x682e6ff3u,
    0x748f82eeu, 0x78a5636fu, 0x84c87814u, 0x8cc70208u, 0x90befffau, 0xa4506cebu, 0xbef9a3f7u, 0xc67178f2u};

constexpr std::array<std::uint32_t, 8> k_init = {0x6a09e667u, 0xbb67ae85u, 0x3c6ef372u, 0xa54ff53au,
                                                 0x510e527fu, 0x9b05688cu, 0x1f83d9abu, 0x5be0cd19u};

constexpr std::uint32_t rotr(std::uint32_t x, int n) noexcept { return (x >> n) | (x << (32 - n)); }

}  // namespace

Sha256::Sha256() noexcept : h_(k_init) {}

void Sha256::block(const std::uint8_t* p) noexcept {
  std::array<std::uint32_t, 64> w{};
  for (std::size_t i = 0; i < 16; ++i) {
    w[i] = (std::uint32_t{p[4 * i]} << 24) | (std::uint32_t{p[4 * i + 1]} << 16) | (std::uint32_t{p[4 * i + 2]} << 8) |
           std::uint32_t{p[4 * i + 3]};
  }
  for (std::size_t i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
  for (std::size_t i = 0; i < 64; ++i) {
    const std::uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k_round[i] + w[i];
    const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h_[0] += a;
  h_[1] += b;
  h_[2] += c;
  h_[3] += d;
  h_[4] += e;
  h_[5] += f;
  h_[6] += g;
  h_[7] += h;
}

Sha256& Sha256::update(const void* data, std::size_t size) noexcept {
  const auto* p = static_cast<const std::uint8_t*>(data);
  total_ += size;
  if (used_ > 0) {
    const std::size_t take = std::min(size, buf_.size() - used_);
    std::memcpy(buf_.data() + used_, p, take);
    used_ += take;
    p += take;
    size -= take;
    if (used_ < buf_.size()) return *this;
    block(buf_.data());
    used_ = 0;
  }
  for (; size >= 64; p += 64, size -= 64) block(p);
  if (size > 0) {
    std::memcpy(buf_.data(), p, size);
    used_ = size;
  }
  return *this;
}

Digest Sha256::finish() noexcept {
  const std::uint64_t bits = total_ * 8;
  const std::uint8_t one = 0x80;
  update(&one, 1);
  const std::uint8_t zero = 0;
  while (used_ != 56) update(&zero, 1);
  std::array<std::uint8_t, 8> len{};
  for (std::size_t i = 0; i < 8; ++i) len[i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
  update(len.data(), len.size());
  Digest out{};
  for (std::size_t i = 0; i < 8; ++i) {
    out[4 * i] = static_cast<std::uint8_t>(h_[i] >> 24);
    out[4 * i + 1] = static_cast<std::uint8_t>(h_[i] >> 16);
    out[4 * i + 2] = static_cast<std::uint8_t>(h_[i] >> 8);
    out[4 * i + 3] = static_cast<std::uint8_t>(h_[i]);
  }
  *this = Sha256{};
  return out;
}

Digest sha256(std::string_view bytes) noexcept { return Sha256{}.update(bytes).finish(); }

namespace {

// Overwrites the stack below the caller's frame, where the frames of the functions it called were:
// SHA-256's message schedule holds the key-derived blocks there. So no forked child (fork copies every
// thread's stack) finds the key, or a hash state that is as good as the key, in the dead stack.
[[gnu::noinline]] void wipe_stack_below() noexcept {
  unsigned char scratch[4096];
  ::explicit_bzero(scratch, sizeof scratch);
  asm volatile("" : : "r"(scratch) : "memory");
}

}  // namespace

Digest hmac_sha256(std::string_view key, std::string_view message) noexcept {
  std::array<std::uint8_t, 64> block{};
  if (key.size() > block.size()) {
    Digest d = sha256(key);
    std::copy(d.begin(), d.end(), block.begin());
    ::explicit_bzero(d.data(), d.size());
  } else {
    std::copy(key.begin(), key.end(), block.begin());
  }
  std::array<std::uint8_t, 64> pad{};
  for (std::size_t i = 0; i < pad.size(); ++i) pad[i] = static_cast<std::uint8_t>(block[i] ^ 0x36);
  Sha256 inner_hash;
  const Digest inner = inner_hash.update(pad.data(), pad.size()).update(message).finish();
  for (std::size_t i = 0; i < pad.size(); ++i) pad[i] = static_cast<std::uint8_t>(block[i] ^ 0x5c);
  Sha256 outer_hash;
  const Digest out = outer_hash.update(pad.data(), pad.size()).update(inner.data(), inner.size()).finish();
  // The key and what is derived from it, wiped where they were: this process may fork later.
  ::explicit_bzero(block.data(), block.size());
  ::explicit_bzero(pad.data(), pad.size());
  ::explicit_bzero(static_cast<void*>(&inner_hash), sizeof inner_hash);
  ::explicit_bzero(static_cast<void*>(&outer_hash), sizeof outer_hash);
  wipe_stack_below();
  return out;
}

bool equal_digests(const Digest& a, const Digest& b) noexcept {
  std::uint8_t diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = static_cast<std::uint8_t>(diff | (a[i] ^ b[i]));
  return diff == 0;
}

std::string to_hex(const Digest& digest) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s(digest.size() * 2, '0');
  for (std::size_t i = 0; i < digest.size(); ++i) {
    s[2 * i] = digits[digest[i] >> 4];
    s[2 * i + 1] = digits[digest[i] & 0xF];
  }
  return s;
}

}  // namespace leap::sandbox

// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include "compile/memory_cache.hpp"
#include <string>

using leap::sandbox::CompileResult;
using leap::sandbox::Digest;
using leap::sandbox::detail::MemoryCache;

namespace {
Digest key(std::uint8_t n) {
  Digest d{};
  d[0] = n;
  return d;
}
CompileResult with_ptx(std::size_t bytes) {
  CompileResult r;
  r.ptx.assign(bytes, 'p');
  return r;
}
}  // namespace

TEST_CASE("memory cache: the least recently used go first when the budget is passed", "[sandbox][cache]") {
  MemoryCache cache(3 * (256 + 1000));  // three entries of 1000 PTX bytes each
  cache.insert(key(1), with_ptx(1000));
  cache.insert(key(2), with_ptx(1000));
  cache.insert(key(3), with_ptx(1000));
  CHECK(cache.entries() == 3);
  CHECK(cache.find(key(1)).has_value());  // 1 is now the most recent; 2 the least
  cache.insert(key(4), with_ptx(1000));
  CHECK(cache.entries() == 3);
  CHECK_FALSE(cache.find(key(2)).has_value());
  CHECK(cache.find(key(1)).has_value());
  CHECK(cache.find(key(3)).has_value());
  CHECK(cache.find(key(4)).has_value());
  CHECK(cache.bytes() == 3 * (256 + 1000));
}

TEST_CASE("memory cache: a result larger than the budget, or any with no budget, is not kept", "[sandbox][cache]") {
  MemoryCache small(1000);
  small.insert(key(1), with_ptx(1000));
  CHECK(small.entries() == 0);
  MemoryCache none(0);
  none.insert(key(1), with_ptx(1));
  CHECK_FALSE(none.find(key(1)).has_value());
}

TEST_CASE("memory cache: a key stored again replaces its entry, and a kept result is not marked a hit",
          "[sandbox][cache]") {
  MemoryCache cache(1 << 20);
  CompileResult hit = with_ptx(10);
  hit.cache_hit = true;
  cache.insert(key(7), hit);
  cache.insert(key(7), with_ptx(20));
  CHECK(cache.entries() == 1);
  CHECK(cache.bytes() == 256 + 20);
  const auto found = cache.find(key(7));
  REQUIRE(found.has_value());
  CHECK(found->ptx.size() == 20);
  CHECK_FALSE(found->cache_hit);
  cache.clear();
  CHECK(cache.entries() == 0);
  CHECK(cache.bytes() == 0);
}

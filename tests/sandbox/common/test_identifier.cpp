// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include "common/identifier.hpp"
#include <string>

using leap::sandbox::detail::is_identifier;
using leap::sandbox::detail::k_any_identifier_length;

TEST_CASE("is_identifier accepts C identifiers and nothing else", "[sandbox][identifier]") {
  for (const char* good : {"x", "_", "_x1", "row_sums", "N", "a1b2", "__global"}) {
    INFO(good);
    CHECK(is_identifier(good, k_any_identifier_length));
  }
  for (const char* bad : {"", "1x", "9", "a-b", "a b", "a.b", "x\n", "caf\xc3\xa9"}) {
    INFO(bad);
    CHECK_FALSE(is_identifier(bad, k_any_identifier_length));
  }
  CHECK_FALSE(is_identifier(std::string("a\0b", 3), k_any_identifier_length));  // an embedded NUL byte
}

TEST_CASE("is_identifier holds a name to the caller's length limit", "[sandbox][identifier]") {
  const std::string sixty_four(64, 'n');
  CHECK(is_identifier(sixty_four, 64));
  CHECK_FALSE(is_identifier(sixty_four + "n", 64));
  CHECK(is_identifier(std::string(255, 'k'), 255));
  CHECK_FALSE(is_identifier(std::string(256, 'k'), 255));
  CHECK(is_identifier(std::string(100000, 'd'), k_any_identifier_length));
}

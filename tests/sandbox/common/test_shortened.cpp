// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include "common/shortened.hpp"
#include <string>

using leap::sandbox::detail::shortened;

TEST_CASE("shortened keeps text within its width and cuts longer text to its start", "[sandbox][shortened]") {
  CHECK(shortened("", 10, 7) == "");
  CHECK(shortened("0123456789", 10, 7) == "0123456789");   // exactly the width: as it is
  CHECK(shortened("0123456789a", 10, 7) == "0123456...");  // one past it: cut, within the width
  const std::string long_text(5000, 'x');
  CHECK(shortened(long_text, 80, 60) == std::string(60, 'x') + "...");
  CHECK(shortened(std::string(80, 'y'), 80, 60) == std::string(80, 'y'));
  CHECK(shortened(std::string("a\0b", 3), 80, 60) == std::string("a\0b", 3));  // bytes are kept as they are
}

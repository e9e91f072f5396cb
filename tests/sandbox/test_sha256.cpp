// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include <leap/sandbox/sha256.hpp>
#include <string>

using leap::sandbox::Sha256;
using leap::sandbox::sha256;
using leap::sandbox::to_hex;

TEST_CASE("sha256 matches the FIPS 180-4 test vectors", "[sandbox][sha256]") {
  CHECK(to_hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(to_hex(sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(to_hex(sha256(std::string(1000000, 'a'))) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256 gives the same digest however the input is split", "[sandbox][sha256]") {
  std::string data;
  for (int i = 0; i < 1000; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  const auto whole = sha256(data);
  for (std::size_t step : {1u, 3u, 63u, 64u, 65u, 200u}) {
    Sha256 h;
    for (std::size_t i = 0; i < data.size(); i += step) h.update(std::string_view(data).substr(i, step));
    CHECK(h.finish() == whole);
  }
  // finish() resets the object.
  Sha256 h;
  h.update("abc");
  (void)h.finish();
  CHECK(to_hex(h.update("abc").finish()) == to_hex(sha256("abc")));
}

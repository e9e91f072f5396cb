// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include "common/sha256.hpp"
#include <string>

using leap::sandbox::Sha256;
using leap::sandbox::sha256;
using leap::sandbox::to_hex;

TEST_CASE("sha256 matches the FIPS 180-4 test vectors", "[sandbox][sha256]") {
  CHECK(to_hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(to_hex(sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(to_hex(sha256(std::string(1000000, 'a'))) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("hmac-sha256 matches the RFC 4231 test vectors", "[sandbox][sha256]") {
  using leap::sandbox::hmac_sha256;
  CHECK(to_hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(to_hex(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a 131-byte key is hashed first.
  CHECK(to_hex(hmac_sha256(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  CHECK(leap::sandbox::equal_digests(sha256("a"), sha256("a")));
  CHECK_FALSE(leap::sandbox::equal_digests(sha256("a"), sha256("b")));
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

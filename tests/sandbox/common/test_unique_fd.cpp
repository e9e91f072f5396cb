// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include "common/unique_fd.hpp"
#include <fcntl.h>
#include <unistd.h>
#include <utility>

using leap::sandbox::detail::UniqueFd;

namespace {
bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }
}  // namespace

TEST_CASE("UniqueFd closes its descriptor when it goes, and only once", "[sandbox][unique_fd]") {
  int raw = -1;
  {
    const UniqueFd fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    REQUIRE(fd);
    raw = fd.get();
    CHECK(is_open(raw));
  }
  CHECK_FALSE(is_open(raw));
  CHECK_FALSE(UniqueFd());
  CHECK_FALSE(UniqueFd(-1));
}

TEST_CASE("UniqueFd hands its descriptor over on a move and closes the old one on a reset", "[sandbox][unique_fd]") {
  UniqueFd a(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int first = a.get();
  UniqueFd b(std::move(a));
  CHECK(b.get() == first);
  CHECK_FALSE(a);  // NOLINT(bugprone-use-after-move): the moved-from owner holds nothing
  CHECK(is_open(first));

  UniqueFd c(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  const int second = c.get();
  c = std::move(b);  // c's own descriptor is closed, b's is now c's
  CHECK(c.get() == first);
  CHECK_FALSE(is_open(second));
  CHECK(is_open(first));

  c.reset();
  CHECK_FALSE(c);
  CHECK_FALSE(is_open(first));
}

// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>
#include "common/fd_io.hpp"
#include "common/unique_fd.hpp"
#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

namespace sd = leap::sandbox::detail;

namespace {
// An unlinked temporary file holding `text`, open for reading and writing.
sd::UniqueFd temp_file_with(const std::string& text) {
  char name[] = "/tmp/leap-fd-io-XXXXXX";
  sd::UniqueFd fd(::mkstemp(name));
  REQUIRE(fd);
  ::unlink(name);
  REQUIRE(sd::write_all(fd.get(), text));
  return fd;
}
}  // namespace

TEST_CASE("read_regular reads a whole regular file within its limit, from the start", "[sandbox][fd_io]") {
  const std::string text(100000, 'q');
  const sd::UniqueFd fd = temp_file_with(text);  // the offset is at the end after writing
  CHECK(sd::read_regular(fd.get(), text.size()) == text);
  CHECK(sd::read_regular(temp_file_with("").get(), 0) == std::string());
}

TEST_CASE("read_regular says why it read nothing", "[sandbox][fd_io]") {
  sd::ReadFailure why;
  const sd::UniqueFd big = temp_file_with("0123456789");
  CHECK_FALSE(sd::read_regular(big.get(), 9, &why).has_value());
  CHECK(why.kind == sd::ReadFailure::Kind::too_large);
  CHECK(why.size == 10);

  const sd::UniqueFd dir(::open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  CHECK_FALSE(sd::read_regular(dir.get(), 1 << 20, &why).has_value());
  CHECK(why.kind == sd::ReadFailure::Kind::not_regular);

  const sd::UniqueFd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  CHECK_FALSE(sd::read_regular(null.get(), 1 << 20, &why).has_value());
  CHECK(why.kind == sd::ReadFailure::Kind::not_regular);

  CHECK_FALSE(sd::read_regular(-1, 1 << 20, &why).has_value());
  CHECK(why.kind == sd::ReadFailure::Kind::read_error);
  CHECK(why.error == EBADF);

  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const sd::UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  CHECK_FALSE(sd::read_regular(read_end.get(), 1 << 20).has_value());  // a pipe is refused, never waited on
}

TEST_CASE("list_directory names a directory's entries without . and ..", "[sandbox][fd_io]") {
  char name[] = "/tmp/leap-fd-io-dir-XXXXXX";
  REQUIRE(::mkdtemp(name) != nullptr);
  const std::string dir(name);
  for (const char* f : {"a", "b.bin"}) {
    const sd::UniqueFd fd(::open((dir + "/" + f).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
    REQUIRE(fd);
  }
  const sd::UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  std::vector<std::string> names = sd::list_directory(dfd.get());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"a", "b.bin"});
  for (const char* f : {"a", "b.bin"}) ::unlink((dir + "/" + f).c_str());
  ::rmdir(dir.c_str());
  CHECK(sd::list_directory(-1).empty());
}

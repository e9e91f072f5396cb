// SPDX-License-Identifier: Apache-2.0
// The one reader of key files (the fleet key, the MAC keys of the compile cache and the stored PCHs):
// what it refuses, that a FIFO never stalls it, and that every refusal is one error naming the file and
// the fix.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>

#include "common/key_file.hpp"
#include "common/unique_fd.hpp"

namespace sd = leap::sandbox::detail;
using namespace std::chrono_literals;

namespace {

struct PrivateDir {
  std::filesystem::path path;
  sd::UniqueFd fd;
  PrivateDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "leap-key-file-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
    fd = sd::UniqueFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(fd);
  }
  ~PrivateDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

// Runs `read` on a thread and says what it said within 5 s, or "blocked" (then lets it go by opening
// the FIFO `fifo` for writing, so the test can end).
template <class Read>
std::string within_five_seconds(const std::filesystem::path& fifo, Read read) {
  std::promise<std::string> said;
  auto outcome = said.get_future();
  std::thread reader([&] { said.set_value(read()); });
  const bool answered = outcome.wait_for(5s) == std::future_status::ready;
  if (!answered) {
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
  }
  reader.join();
  return answered ? outcome.get() : "blocked";
}

}  // namespace

TEST_CASE("a FIFO in place of the compile cache's MAC key is refused at once, not waited on", "[sandbox][key_file]") {
  PrivateDir dir;
  REQUIRE(::mkfifoat(dir.fd.get(), "mac.key", 0600) == 0);
  const std::string said = within_five_seconds(dir.path / "mac.key", [&] {
    std::string why;
    const auto key = sd::load_or_create_key_file(dir.fd.get(), "mac.key", 32, "remove it", why);
    return key ? std::string("accepted") : why;
  });
  CHECK_THAT(said, Catch::Contains("mac.key that is a FIFO, not a regular file") && Catch::Contains("remove it"));
}

TEST_CASE("a key file is refused for each rule it breaks, naming the file and the fix", "[sandbox][key_file]") {
  PrivateDir dir;
  const auto make = [&](const char* name, const std::string& content, mode_t mode) {
    std::ofstream(dir.path / name) << content;
    REQUIRE(::chmod((dir.path / name).c_str(), mode) == 0);
    return (dir.path / name).string();
  };
  std::string buffer(65, '\0');
  const sd::KeyFileRules rules{.label = "the test key file", .max_bytes = 64, .how_to_make = "make one"};
  const auto read = [&](const std::string& path, const sd::KeyFileRules& r) {
    return sd::read_key_file(AT_FDCWD, path, r, buffer.data(), buffer.size());
  };
  const std::string good = make("good.key", "0123456789abcdef", 0600);
  CHECK(read(good, rules) == 16);
  CHECK(buffer.substr(0, 16) == "0123456789abcdef");

  const std::string open = make("open.key", "0123456789abcdef", 0604);
  CHECK_THROWS_WITH(read(open, rules),
                    Catch::Contains("the test key file " + open + " may be read by group or others") &&
                        Catch::Contains("(mode 0604)") && Catch::Contains("chmod 600 " + open));
  const std::string writable = make("writable.key", "0123456789abcdef", 0620);
  CHECK_THROWS_WITH(read(writable, rules), Catch::Contains("gives group or others access"));
  const std::string big = make("big.key", std::string(65, 'k'), 0600);
  CHECK_THROWS_WITH(read(big, rules), Catch::Contains("is 65 bytes; a key file holds one key (at most 64 bytes)"));
  CHECK_THROWS_WITH(read((dir.path / "none.key").string(), rules),
                    Catch::Contains("none.key does not exist; make one"));
  CHECK_THROWS_AS(read(dir.path.string(), rules), sd::KeyFileError);

  std::filesystem::create_symlink(good, dir.path / "link.key");
  CHECK(read((dir.path / "link.key").string(), rules) == 16);  // followed where the rules say so
  sd::KeyFileRules no_links = rules;
  no_links.follow_symlinks = false;
  CHECK_THROWS_WITH(read((dir.path / "link.key").string(), no_links), Catch::Contains("is a symbolic link"));

  if (::geteuid() == 0) {  // giving a file to another user needs root
    const std::string theirs = make("theirs.key", "0123456789abcdef", 0600);
    REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
    CHECK_THROWS_WITH(read(theirs, rules),
                      Catch::Contains("is owned by uid 65534, not by this process's user (uid 0)") &&
                          Catch::Contains("chown 0 " + theirs));
    std::string why;
    REQUIRE(::chown((dir.path / "good.key").c_str(), 65534, 65534) == 0);
    ::rename((dir.path / "good.key").c_str(), (dir.path / "mac.key").c_str());
    CHECK_FALSE(sd::load_or_create_key_file(dir.fd.get(), "mac.key", 16, "remove it", why));
    CHECK_THAT(why, Catch::Contains("mac.key that is owned by uid 65534"));
  }
}

// SPDX-License-Identifier: Apache-2.0
// The fleet's authentication and bounded reads without a Redis: where the key comes from and what is
// refused, what a tag covers (every field moves it), and a reply reader that never holds an
// oversized value yet knows its length and digest.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>
#include <leap/sandbox/fleet_key.hpp>
#include "common/sha256.hpp"
#include <string>

#include "fleet/fleet_auth.hpp"
#include "fleet/fleet_bounded_reply.hpp"
#include "fleet/fleet_redis.hpp"

namespace sb = leap::sandbox;
namespace fl = leap::sandbox::fleet;
using namespace std::chrono_literals;

namespace {

struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "leap-fleet-key-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::filesystem::path write(const std::string& name, const std::string& content, mode_t mode) const {
    const auto p = path / name;
    std::ofstream(p) << content;
    ::chmod(p.c_str(), mode);
    return p;
  }
};

// Sets or unsets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(std::string n, const char* value) : name(std::move(n)) {
    if (const char* o = std::getenv(name.c_str())) old = o;
    if (value != nullptr) {
      ::setenv(name.c_str(), value, 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  ~ScopedEnv() {
    if (old) {
      ::setenv(name.c_str(), old->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
};

const sb::FleetKey& test_key() {
  static const sb::FleetKey key = sb::FleetKey::from_bytes("0123456789abcdef-test-key");
  return key;
}

}  // namespace

TEST_CASE("a fleet key is long enough and private, or refused saying why", "[auth]") {
  ScratchDir dir;
  CHECK_THROWS_WITH(sb::FleetKey::from_bytes("short"), Catch::Contains("5 bytes") && Catch::Contains("at least 16"));
  CHECK(sb::FleetKey::from_bytes(std::string(16, 'k')).bytes() == std::string(16, 'k'));

  // Trailing newlines are not part of a key: `echo KEY > file` and `printf KEY > file` agree.
  const auto good = dir.write("good.key", "0123456789abcdef0123\n", 0600);
  CHECK(sb::FleetKey::from_file(good).bytes() == "0123456789abcdef0123");
  CHECK(sb::FleetKey::from_file(good).fingerprint() == sb::FleetKey::from_bytes("0123456789abcdef0123").fingerprint());
  CHECK(sb::FleetKey::from_file(good).fingerprint().find("0123") == std::string::npos);

  const auto shared = dir.write("shared.key", "0123456789abcdef0123\n", 0644);
  CHECK_THROWS_WITH(sb::FleetKey::from_file(shared), Catch::Contains("mode 0644") && Catch::Contains("chmod 600"));
  const auto group = dir.write("group.key", "0123456789abcdef0123\n", 0640);
  CHECK_THROWS_WITH(sb::FleetKey::from_file(group), Catch::Contains("group or others"));
  const auto tiny = dir.write("tiny.key", "abc\n\n", 0600);
  CHECK_THROWS_WITH(sb::FleetKey::from_file(tiny), Catch::Contains("3 bytes"));
  const auto huge = dir.write("huge.key", std::string(5000, 'k'), 0600);
  CHECK_THROWS_WITH(sb::FleetKey::from_file(huge), Catch::Contains("one key"));
  CHECK_THROWS_WITH(sb::FleetKey::from_file(dir.path / "missing.key"),
                    Catch::Contains("missing.key does not exist") && Catch::Contains("head -c 32 /dev/urandom"));
  CHECK_THROWS_WITH(sb::FleetKey::from_file(dir.path), Catch::Contains("is a directory, not a regular file"));
  // A symbolic link is followed (a mounted secret is often one); the file it names is held to the rules.
  const auto link = dir.path / "link.key";
  std::filesystem::create_symlink(good, link);
  CHECK(sb::FleetKey::from_file(link).bytes() == "0123456789abcdef0123");
}

TEST_CASE("a fleet key file that is a FIFO is refused at once, not waited on", "[auth]") {
  ScratchDir dir;
  const auto fifo = dir.path / "fleet.key";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::promise<std::string> said;
  auto outcome = said.get_future();
  std::thread reader([&] {
    try {
      (void)sb::FleetKey::from_file(fifo);
      said.set_value("accepted");
    } catch (const sb::FleetKeyError& e) {
      said.set_value(e.what());
    }
  });
  const bool answered = outcome.wait_for(5s) == std::future_status::ready;
  if (!answered) {  // blocked in open(): a writer arriving lets it go, so the test can end
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) ::close(writer);
  }
  reader.join();
  REQUIRE(answered);
  const std::string what = outcome.get();
  CHECK_THAT(what, Catch::Contains(fifo.string()) && Catch::Contains("is a FIFO, not a regular file"));
}

TEST_CASE("a fleet key file owned by another user is refused, saying whose it is and what to do", "[auth]") {
  if (::geteuid() != 0) {
    WARN("not run: giving a file to another user needs root");
    return;
  }
  ScratchDir dir;
  const auto theirs = dir.write("theirs.key", "0123456789abcdef0123\n", 0600);
  REQUIRE(::chown(theirs.c_str(), 65534, 65534) == 0);
  CHECK_THROWS_WITH(sb::FleetKey::from_file(theirs), Catch::Contains(theirs.string()) &&
                                                         Catch::Contains("owned by uid 65534") &&
                                                         Catch::Contains("chown 0 " + theirs.string()));
  // Through $LEAP_FLEET_KEY_FILE too: one reader, one error type.
  ScopedEnv f(std::string(sb::fleet_key_file_env), theirs.c_str()), k(std::string(sb::fleet_key_env), nullptr);
  CHECK_THROWS_AS(sb::FleetKey::from_environment(), sb::FleetKeyError);
}

TEST_CASE("a fleet key cannot cross a fork: the child gets neither its bytes nor a key of zeros", "[auth]") {
  const sb::FleetKey key = sb::FleetKey::from_bytes("a-key-that-stays-in-its-process");
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // 0: refused with the reason; 1: the child could read the key; 2: a different error
    int code = 1;
    try {
      (void)key.bytes();
    } catch (const sb::FleetKeyError& e) {
      code = std::string(e.what()).find("Read it again in the child") != std::string::npos ? 0 : 2;
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(key.bytes() == "a-key-that-stays-in-its-process");  // the parent's is untouched
}

TEST_CASE("taking the key and the password from the environment overwrites them there", "[auth]") {
  std::string block = std::string(sb::fleet_key_env) + "=taken-key-0123456789";
  // putenv: the environment holds this very string, as it holds the block a program starts with.
  ScopedEnv f(std::string(sb::fleet_key_file_env), nullptr), k(std::string(sb::fleet_key_env), nullptr);
  REQUIRE(::putenv(block.data()) == 0);
  const std::optional<sb::FleetKey> key = sb::FleetKey::take_from_environment();
  REQUIRE(key);
  CHECK(key->bytes() == "taken-key-0123456789");
  CHECK(std::getenv(std::string(sb::fleet_key_env).c_str()) == nullptr);
  CHECK(block.find("taken-key") == std::string::npos);  // the bytes, not just the entry
  CHECK(block.starts_with(std::string(sb::fleet_key_env) + "="));
}

TEST_CASE("the key comes from the options, then the key file's variable, then the key's, and never silently none",
          "[auth]") {
  ScratchDir dir;
  const auto file = dir.write("fleet.key", "key-from-the-file-0123", 0600);
  {
    ScopedEnv f(std::string(sb::fleet_key_file_env), nullptr), k(std::string(sb::fleet_key_env), nullptr);
    CHECK_FALSE(sb::FleetKey::from_environment());
    CHECK_THROWS_WITH(sb::resolve_fleet_key(std::nullopt, false, "the test"),
                      Catch::Contains("the test: no fleet key") && Catch::Contains("LEAP_FLEET_KEY_FILE") &&
                          Catch::Contains("insecure_no_key"));
    CHECK_FALSE(sb::resolve_fleet_key(std::nullopt, true, "the test"));  // the explicit opt-out
    CHECK(sb::resolve_fleet_key(test_key(), false, "the test")->bytes() == test_key().bytes());
  }
  {
    ScopedEnv f(std::string(sb::fleet_key_file_env), file.c_str()),
        k(std::string(sb::fleet_key_env), "key-in-the-variable-0");
    CHECK(sb::FleetKey::from_environment()->bytes() == "key-from-the-file-0123");
    // A key that the options give wins over the environment's.
    CHECK(sb::resolve_fleet_key(test_key(), false, "the test")->bytes() == test_key().bytes());
  }
  {
    ScopedEnv f(std::string(sb::fleet_key_file_env), nullptr),
        k(std::string(sb::fleet_key_env), "key-in-the-variable-0\n");
    CHECK(sb::FleetKey::from_environment()->bytes() == "key-in-the-variable-0");
  }
  {
    // Set but unusable is an error, not "no key": a typo must not turn authentication off.
    ScopedEnv f(std::string(sb::fleet_key_file_env), (dir.path / "typo.key").c_str()),
        k(std::string(sb::fleet_key_env), nullptr);
    CHECK_THROWS_AS(sb::resolve_fleet_key(std::nullopt, true, "the test"), sb::FleetKeyError);
  }
  {
    ScopedEnv f(std::string(sb::fleet_key_file_env), nullptr), k(std::string(sb::fleet_key_env), "too-short");
    CHECK_THROWS_WITH(sb::FleetKey::from_environment(), Catch::Contains("$LEAP_FLEET_KEY"));
  }
}

TEST_CASE("a tag covers every field, so none can be moved to another message", "[auth]") {
  const std::string line = R"({"id": 7, "op": "compile", "source": "x"})";
  const fl::SignedFields base{fl::MessageKind::request, "leap:requests", "leap:requests:reply:a", "123-abc", "7",
                              sb::sha256(line)};
  const std::string tag = fl::sign(test_key(), base);
  REQUIRE(tag.size() == 64);
  CHECK(fl::verify(test_key(), base, tag));
  CHECK(tag == sb::to_hex(sb::hmac_sha256(test_key().bytes(), fl::signed_message(base))));

  // The exact bytes signed, which the Python client mirrors (python/tests/test_fleet.py has the same vector).
  CHECK(fl::signed_message(base) ==
        "13:leap-fleet-v1,7:request,13:leap:requests,21:leap:requests:reply:a,7:123-abc,1:7,64:" +
            sb::to_hex(sb::sha256(line)) + ",");
  CHECK(fl::sign(test_key(), {fl::MessageKind::reply, "s", "s:reply:c", "1-2", "3", sb::sha256("{}")}) ==
        "51c49111afbf332d1c71cc08ce591865ae1f2b9f8375b01f950c6627a6e9478c");

  auto moved = [&](auto change) {
    fl::SignedFields f = base;
    std::string storage;
    change(f, storage);
    return fl::verify(test_key(), f, tag);
  };
  CHECK_FALSE(moved([](fl::SignedFields& f, std::string&) { f.kind = fl::MessageKind::reply; }));
  CHECK_FALSE(moved([](fl::SignedFields& f, std::string&) { f.stream = "other:requests"; }));
  CHECK_FALSE(moved([](fl::SignedFields& f, std::string&) { f.reply_stream = "leap:requests:reply:b"; }));
  CHECK_FALSE(moved([](fl::SignedFields& f, std::string&) { f.session = "123-abd"; }));
  CHECK_FALSE(moved([](fl::SignedFields& f, std::string&) { f.id = "8"; }));
  CHECK_FALSE(moved([&](fl::SignedFields& f, std::string&) { f.line_digest = sb::sha256(line + " "); }));
  // Netstrings: shifting a byte from one field to the next changes the message.
  fl::SignedFields shifted = base;
  shifted.reply_stream = "leap:requests:reply:a1";
  shifted.session = "23-abc";
  CHECK(fl::signed_message(shifted) != fl::signed_message(base));
  CHECK_FALSE(fl::verify(test_key(), shifted, tag));
  // Another key, a cut tag, not hex: all refused.
  CHECK_FALSE(fl::verify(sb::FleetKey::from_bytes("another-key-of-16-bytes"), base, tag));
  CHECK_FALSE(fl::verify(test_key(), base, tag.substr(0, 63)));
  CHECK_FALSE(fl::verify(test_key(), base, tag + "0"));
  CHECK_FALSE(fl::verify(test_key(), base, std::string(64, 'z')));
  CHECK_FALSE(fl::verify(test_key(), base, ""));
  std::string flipped = tag;
  flipped[10] = flipped[10] == '0' ? '1' : '0';
  CHECK_FALSE(fl::verify(test_key(), base, flipped));
}

TEST_CASE("sessions differ per client and name the process", "[auth]") {
  const std::string a = fl::new_session(), b = fl::new_session();
  CHECK(a != b);
  CHECK(a.starts_with(std::to_string(::getpid()) + "-"));
  CHECK(a.size() == std::to_string(::getpid()).size() + 1 + 32);
}

namespace {

std::string bulk(const std::string& s) { return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n"; }

// Serves `bytes` in chunks of at most `chunk`; asking for a byte past the end fails the test, since a
// real socket would then block.
struct Feed {
  std::string bytes;
  std::size_t chunk;
  std::size_t pos = 0;
  std::size_t calls = 0;
  fl::BoundedReader::Source source() {
    return [this](char* buffer, std::size_t size) -> std::size_t {
      ++calls;
      if (pos >= bytes.size()) throw std::runtime_error("read past the end of the reply");
      const std::size_t n = std::min({size, chunk, bytes.size() - pos});
      std::copy_n(bytes.data() + pos, n, buffer);
      pos += n;
      return n;
    };
  }
};

// An XREADGROUP reply: [[stream, [[id, [field, value, ...]]]]].
std::string xreadgroup_reply(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string body = "*" + std::to_string(2 * fields.size()) + "\r\n";
  for (const auto& [k, v] : fields) body += bulk(k) + bulk(v);
  return "*1\r\n*2\r\n" + bulk("leap:requests") + "*1\r\n*2\r\n" + bulk("1-0") + body;
}

}  // namespace

TEST_CASE("the bounded reader keeps the start of an oversized value, its length and digest, and no more", "[auth]") {
  const std::string huge(20u << 20, 'x');  // 20 MiB over a limit of 1 KiB: 100 bytes kept
  Feed feed{xreadgroup_reply({{"request", huge}, {"reply", "leap:requests:reply:a"}, {"tag", "t"}}), 4096};
  fl::BoundedReader reader(
      feed.source(),
      {.max_value_bytes = 1024, .oversized_prefix_bytes = 100, .max_kept_bytes = 4096, .max_elements = 64});
  fl::BoundedReply reply = reader.read();
  CHECK(feed.pos == feed.bytes.size());  // all of it read off the socket, nothing past it asked for
  const auto parsed = fl::parse_entries(std::move(reply.elements.at(0).elements.at(1)));
  REQUIRE(parsed.size() == 1);
  const fl::StreamEntry& e = parsed.front();
  CHECK(e.id == "1-0");
  CHECK(e.complete);
  CHECK(*e.field("request") == std::string(100, 'x'));
  CHECK(e.lengths[e.index("request")] == huge.size());
  CHECK(e.digests[e.index("request")] == sb::sha256(huge));
  CHECK_FALSE(e.whole("request"));
  CHECK(e.whole("reply"));
  CHECK(*e.field("reply") == "leap:requests:reply:a");
  CHECK(*e.field("tag") == "t");
}

TEST_CASE("the bounded reader caps what all values and elements keep together", "[auth]") {
  // 100 fields of 1000 bytes: kept at most 8 KiB of them, and at most 32 elements.
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 100; ++i) many.emplace_back("f" + std::to_string(i), std::string(1000, 'v'));
  Feed feed{xreadgroup_reply(many), 1 << 20};
  fl::BoundedReader reader(feed.source(), {.max_value_bytes = 4096, .max_kept_bytes = 8192, .max_elements = 32});
  fl::BoundedReply reply = reader.read();
  CHECK(feed.pos == feed.bytes.size());
  std::size_t kept = 0, elements = 0;
  auto walk = [&](const auto& self, const fl::BoundedReply& r) -> void {
    kept += r.text.size();
    elements += r.elements.size();
    for (const auto& e : r.elements) self(self, e);
  };
  walk(walk, reply);
  CHECK(kept <= 8192);
  CHECK(elements <= 32);
  const auto parsed = fl::parse_entries(std::move(reply.elements.at(0).elements.at(1)));
  REQUIRE(parsed.size() == 1);
  CHECK_FALSE(parsed.front().complete);  // fields were dropped: the entry says so
}

TEST_CASE("the bounded reader reads every reply type and refuses what is not RESP", "[auth]") {
  auto read = [](const std::string& bytes) {
    Feed feed{bytes, 3};
    return fl::BoundedReader(feed.source(), {}).read();
  };
  CHECK(read("+OK\r\n").type == fl::BoundedReply::Type::status);
  CHECK(read("-NOGROUP no such group\r\n").text == "NOGROUP no such group");
  CHECK(read(":-42\r\n").integer == -42);
  CHECK(read("$-1\r\n").type == fl::BoundedReply::Type::nil);
  CHECK(read("*-1\r\n").type == fl::BoundedReply::Type::nil);
  CHECK(read("$0\r\n\r\n").text.empty());
  CHECK_THROWS_AS(read("?what\r\n"), fl::ProtocolError);
  CHECK_THROWS_AS(read("$3\r\nabcXY"), fl::ProtocolError);
  CHECK_THROWS_AS(read(":12x\r\n"), fl::ProtocolError);
  CHECK_THROWS_AS(read(std::string(20, '*') + "1\r\n"), fl::ProtocolError);  // "*****..." is not a length
  std::string deep;
  for (int i = 0; i < 12; ++i) deep += "*1\r\n";
  CHECK_THROWS_WITH(read(deep + ":1\r\n"), Catch::Contains("nested deeper"));
}

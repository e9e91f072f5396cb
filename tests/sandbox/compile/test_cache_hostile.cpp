// SPDX-License-Identifier: Apache-2.0
// The cache under attack and under load: only NVRTC's verdicts are kept, the disk tier stays within
// its budget (least recently used first, across processes), planted and edited entries are never
// served, permissions are private and symlinks are not followed.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <fstream>
#include <leap/sandbox/compiler.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "compile/result_codec.hpp"
#include "common/sha256.hpp"
#include "test_support.hpp"

using namespace leap::sandbox;

namespace {

CacheOptions disk_options(const std::filesystem::path& dir, std::size_t disk_bytes, std::size_t memory_bytes = 0) {
  CacheOptions o;
  o.memory_bytes = memory_bytes;
  o.directory = dir;
  o.disk_bytes = disk_bytes;
  return o;
}

CacheKey key_of(int i) {
  CompileJob j;
  j.source = "extern \"C\" __global__ void k" + std::to_string(i) + "(int* p) { p[0] = " + std::to_string(i) + "; }\n";
  return make_cache_key(j, "nvrtc test");
}

// A result as NVRTC gives it, with a size that varies from entry to entry.
CompileResult verdict_of(int i) {
  CompileResult r;
  r.status = i % 5 == 0 ? CompileStatus::error : CompileStatus::ok;
  r.nvrtc_verdict = true;
  r.log = "log of " + std::to_string(i);
  r.ptx.assign(200 + static_cast<std::size_t>(i % 17) * 61, static_cast<char>('a' + i % 26));
  return r;
}

// What the entries really take on disk, counted by walking the directory.
std::uintmax_t entry_bytes(const std::filesystem::path& dir, std::size_t* count = nullptr) {
  std::uintmax_t total = 0;
  std::size_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".bin") {
      total += e.file_size();
      ++n;
    }
  }
  if (count != nullptr) *count = n;
  return total;
}

unsigned mode_of(const std::filesystem::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 0777;
}

}  // namespace

TEST_CASE("cache: only NVRTC's verdicts are stored, never a death, a limit or an internal error", "[sandbox][cache]") {
  CompileCache cache(CacheOptions{});
  CompileResult died;
  died.status = CompileStatus::error;  // what a compile child killed by a signal reports
  died.log = "the compiler process died (signal 9)";
  cache.store(key_of(1), died);
  CHECK_FALSE(cache.find(key_of(1)).has_value());
  CompileResult timeout = verdict_of(2);
  timeout.status = CompileStatus::timeout;
  cache.store(key_of(2), timeout);
  CHECK_FALSE(cache.find(key_of(2)).has_value());
  CompileResult refused = verdict_of(3);
  refused.status = CompileStatus::refused;
  cache.store(key_of(3), refused);
  CHECK_FALSE(cache.find(key_of(3)).has_value());
  cache.store(key_of(4), verdict_of(4));
  CHECK(cache.find(key_of(4)).has_value());
  CHECK(cache.stats().stores == 1);
}

TEST_CASE("cache: a compile child killed once is not replayed to later compiles of the same source",
          "[sandbox][cache]") {
  // The child is killed from outside mid-compile, as the OOM killer would; the next compile of the
  // same source must compile afresh and succeed.
  auto cache = std::make_shared<CompileCache>(CacheOptions{});
  Compiler c(leap_test::config(Isolation::process, 1, cache));
  CompileJob slow;
  slow.source = "#include <cuda_fp16.h>\n" + std::string(leap_test::plain_kernel());  // a compile of some length
  slow.options.timeout = std::chrono::milliseconds(30000);
  const pid_t self = ::getpid();
  std::atomic<bool> stop{false};
  std::thread killer([&] {
    // Kill the first compile child that appears: a process whose parent is this process's compile
    // launcher (see compile_launcher.hpp), running NVRTC.
    while (!stop) {
      for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const long ppid = leap_test::parent_of(name);
        if (ppid > 0 && ppid != self && leap_test::parent_of(std::to_string(ppid)) == self) {
          ::kill(std::stoi(name), SIGKILL);
          return;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  const CompileResult first = c.compile(slow);
  stop = true;
  killer.join();
  REQUIRE(first.status == CompileStatus::error);
  CHECK_FALSE(first.nvrtc_verdict);
  CHECK_THAT(first.log, Catch::Contains("signal 9"));
  CHECK(cache->stats().stores == 0);
  const CompileResult second = c.compile(slow);
  CHECK_FALSE(second.cache_hit);
  CHECK(second.ok());
}

TEST_CASE("cache: the disk tier stays under its budget while 10 000 distinct sources pass through it",
          "[sandbox][cache]") {
  leap_test::TempDir dir;
  const std::size_t budget = 256 << 10;  // about 300 of these entries
  CompileCache cache(disk_options(dir.path / "c", budget));
  const int n = 10000;
  std::uintmax_t largest = 0;
  for (int i = 0; i < n; ++i) {
    cache.store(key_of(i), verdict_of(i));
    if (i % 250 == 249) {
      const std::uintmax_t used = entry_bytes(dir.path / "c");
      largest = std::max(largest, used);
      REQUIRE(used <= budget);
      CHECK(cache.disk_usage() == used);  // the shared counter agrees with the directory
    }
    if (i % 100 == 0 && i >= 200) {
      // Use an old entry now and then: a hit refreshes it, so the LRU keeps it.
      REQUIRE(cache.find(key_of(0)).has_value());
    }
  }
  std::size_t count = 0;
  const std::uintmax_t used = entry_bytes(dir.path / "c", &count);
  CHECK(used <= budget);
  CHECK(largest > budget / 2);  // the budget was used, not left empty
  CHECK(count > 100);
  CHECK(cache.stats().disk_evictions >= static_cast<std::uint64_t>(n) - count - 1);
  // The newest entries are there and right, the oldest unused ones are gone, the one in use stayed.
  for (int i = n - 20; i < n; ++i) {
    const std::optional<CompileResult> r = cache.find(key_of(i));
    REQUIRE(r.has_value());
    CHECK(r->ptx == verdict_of(i).ptx);
    CHECK(r->status == verdict_of(i).status);
  }
  for (int i = 1; i < 20; ++i) CHECK_FALSE(cache.find(key_of(i)).has_value());
  CHECK(cache.find(key_of(0)).has_value());
  CHECK(cache.stats().corrupt == 0);
}

TEST_CASE("cache: an entry larger than an eighth of the budget is not kept on disk", "[sandbox][cache]") {
  leap_test::TempDir dir;
  CompileCache cache(disk_options(dir.path / "c", 256 << 10));
  CompileResult big = verdict_of(1);
  big.ptx.assign(40 << 10, 'x');
  cache.store(key_of(1), big);
  CHECK(cache.stats().disk_skipped == 1);
  CHECK(entry_bytes(dir.path / "c") == 0);
}

TEST_CASE("cache: processes sharing the directory keep it within the budget together", "[sandbox][cache]") {
  leap_test::TempDir dir;
  const std::size_t budget = 128 << 10;
  { CompileCache create(disk_options(dir.path / "c", budget)); }
  leap_test::check_in_children(4, [&](int p) {
    int bad = 0;
    CompileCache cache(disk_options(dir.path / "c", budget));
    for (int i = 0; i < 600; ++i) {
      const int id = p * 1000 + i;
      cache.store(key_of(id), verdict_of(id));
      if (std::optional<CompileResult> r = cache.find(key_of(id)); r && r->ptx != verdict_of(id).ptx) ++bad;
    }
    return bad + static_cast<int>(cache.stats().corrupt);
  });
  CHECK(entry_bytes(dir.path / "c") <= budget);
  CompileCache cache(disk_options(dir.path / "c", budget));
  CHECK(cache.disk_usage() == entry_bytes(dir.path / "c"));
}

TEST_CASE("cache: a planted or edited entry is never served, and is replaced by a real compile", "[sandbox][cache]") {
  leap_test::TempDir dir;
  const std::filesystem::path root = dir.path / "c";
  auto cache = std::make_shared<CompileCache>(disk_options(root, 1 << 20));
  Compiler c(leap_test::config(Isolation::trusted_in_process, 1, cache));
  CompileJob job;
  job.source = std::string(leap_test::plain_kernel()) + "int broken(";  // NVRTC says error
  const CompileResult honest = c.compile(job);
  REQUIRE(honest.status == CompileStatus::error);
  // The one entry the compile stored, and its key (the file name).
  std::filesystem::path entry;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.path().extension() == ".bin") entry = e.path();
  }
  REQUIRE(!entry.empty());
  CacheKey key;
  const std::string hex = entry.stem().string();
  REQUIRE(hex.size() == 64);
  for (std::size_t i = 0; i < 32; ++i)
    key.digest[i] = static_cast<std::uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  REQUIRE(cache->entry_path(key) == entry);

  SECTION("an entry forged with a checksum but without the key: the old format's attack") {
    // What an attacker can write without the MAC key: a well-formed entry saying "ok".
    CompileResult forged;
    forged.status = CompileStatus::ok;
    forged.nvrtc_verdict = true;
    forged.ptx = "// forged";
    std::string body = "LEAPSBX2";
    body.append(reinterpret_cast<const char*>(key.digest.data()), key.digest.size());
    body += leap::sandbox::detail::encode_result(forged);
    const Digest sum = sha256(body);
    body.append(reinterpret_cast<const char*>(sum.data()), sum.size());
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << body;
  }
  SECTION("one flipped byte in the stored verdict") {
    std::string bytes = leap_test::read_file(entry);
    bytes[8 + 32] = static_cast<char>(bytes[8 + 32] ^ 1);  // status error -> 1 ^ 1 = ok
    std::ofstream(entry, std::ios::binary | std::ios::trunc) << bytes;
  }
  SECTION("an entry made under another cache's key") {
    leap_test::TempDir other;
    auto other_cache = std::make_shared<CompileCache>(disk_options(other.path / "c", 1 << 20));
    CompileResult ok = honest;
    ok.status = CompileStatus::ok;
    other_cache->store(key, ok);
    std::filesystem::copy_file(other_cache->entry_path(key), entry, std::filesystem::copy_options::overwrite_existing);
  }
  SECTION("a symlink in place of the entry") {
    leap_test::TempDir other;
    auto other_cache = std::make_shared<CompileCache>(disk_options(other.path / "c", 1 << 20));
    CompileResult ok = honest;
    ok.status = CompileStatus::ok;
    other_cache->store(key, ok);
    std::filesystem::remove(entry);
    std::filesystem::create_symlink(other_cache->entry_path(key), entry);
  }
  SECTION("a symlinked shard directory") {
    leap_test::TempDir other;
    auto other_cache = std::make_shared<CompileCache>(disk_options(other.path / "c", 1 << 20));
    CompileResult ok = honest;
    ok.status = CompileStatus::ok;
    other_cache->store(key, ok);
    std::filesystem::remove_all(entry.parent_path());
    std::filesystem::create_directory_symlink(other_cache->entry_path(key).parent_path(), entry.parent_path());
  }
  cache->clear_memory();
  const CompileResult again = c.compile(job);
  CHECK_FALSE(again.cache_hit);
  CHECK(again.status == CompileStatus::error);
  CHECK(cache->stats().corrupt == 1);
}

TEST_CASE("cache: the directory is 0700, entries and the key 0600, and a symlinked directory is refused",
          "[sandbox][cache]") {
  leap_test::TempDir dir;
  const std::filesystem::path root = dir.path / "c";
  CompileCache cache(disk_options(root, 1 << 20));
  cache.store(key_of(7), verdict_of(7));
  CHECK(mode_of(root) == 0700);
  CHECK(mode_of(root / "mac.key") == 0600);
  CHECK(mode_of(cache.entry_path(key_of(7))) == 0600);
  CHECK(mode_of(cache.entry_path(key_of(7)).parent_path()) == 0700);

  // An existing directory open to others is tightened; a symlink is refused.
  std::filesystem::create_directory(dir.path / "open");
  std::filesystem::permissions(dir.path / "open", std::filesystem::perms::all);
  { CompileCache tightened(disk_options(dir.path / "open", 1 << 20)); }
  CHECK(mode_of(dir.path / "open") == 0700);
  std::filesystem::create_directory_symlink(root, dir.path / "link");
  CHECK_THROWS_WITH(CompileCache(disk_options(dir.path / "link", 1 << 20)), Catch::Contains("symlink"));
  // A key file others can read is refused with what to do.
  std::filesystem::permissions(root / "mac.key",
                               std::filesystem::perms::owner_read | std::filesystem::perms::others_read);
  CHECK_THROWS_WITH(CompileCache(disk_options(root, 1 << 20)),
                    Catch::Contains("mac.key") && Catch::Contains("remove it"));
  CHECK_THROWS_AS(CompileCache(disk_options(dir.path / "d", 1000)), std::invalid_argument);
}

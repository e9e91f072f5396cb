// SPDX-License-Identifier: Apache-2.0
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include "compile/compat_headers.hpp"
#include <leap/sandbox/compiler.hpp>
#include <string>
#include <thread>
#include <vector>

#include "test_support.hpp"

using namespace leap::sandbox;

namespace {
CompileJob plain_job() {
  CompileJob j;
  j.source = leap_test::plain_kernel();
  return j;
}
}  // namespace

TEST_CASE("cache key: stable, and sensitive to every input", "[sandbox][cache]") {
  const CompileJob base = plain_job();
  const CacheKey k = make_cache_key(base, "nvrtc 13.0");
  CHECK(k == make_cache_key(base, "nvrtc 13.0"));
  CHECK(k.hex().size() == 64);
  CHECK_FALSE(k == make_cache_key(base, "nvrtc 13.1"));
  auto differs = [&](auto mutate) {
    CompileJob j = base;
    mutate(j);
    return !(make_cache_key(j, "nvrtc 13.0") == k);
  };
  CHECK(differs([](CompileJob& j) { j.source += " "; }));
  CHECK(differs([](CompileJob& j) { j.options.arch = "sm_80"; }));
  CHECK(differs([](CompileJob& j) { j.options.fast_math = true; }));
  CHECK(differs([](CompileJob& j) { j.options.cxx_standard = 20; }));
  CHECK(differs([](CompileJob& j) { j.options.defines = {{"N", "4"}}; }));
  CHECK(differs([](CompileJob& j) { j.options.name_expressions = {"scale"}; }));
  CHECK(differs([](CompileJob& j) { j.options.want_ptx = false; }));
  CHECK(differs([](CompileJob& j) { j.headers = {{"a.h", ""}}; }));
  // Length prefixes: moving bytes between fields changes the key.
  CompileJob x = base, y = base;
  x.headers = {{"ab", "c"}};
  y.headers = {{"a", "bc"}};
  CHECK_FALSE(make_cache_key(x, "v") == make_cache_key(y, "v"));
  // Header order does not matter (NVRTC looks them up by name); the time limit is not an input.
  CompileJob h1 = base, h2 = base;
  h1.headers = {{"a.h", "1"}, {"b.h", "2"}};
  h2.headers = {{"b.h", "2"}, {"a.h", "1"}};
  h2.options.timeout = std::chrono::milliseconds(5);
  CHECK(make_cache_key(h1, "v") == make_cache_key(h2, "v"));
}

TEST_CASE("cache: memory hit returns the same bytes, misses compile", "[sandbox][cache]") {
  auto cache = std::make_shared<CompileCache>();
  Compiler c(leap_test::config(Isolation::trusted_in_process, 0, cache));
  const CompileResult first = c.compile(plain_job());
  REQUIRE(first.ok());
  CHECK_FALSE(first.cache_hit);
  const CompileResult second = c.compile(plain_job());
  CHECK(second.cache_hit);
  CHECK(second.ptx == first.ptx);
  CHECK(second.cubin == first.cubin);
  CHECK(second.seconds < first.seconds);
  CHECK(cache->stats().memory_hits == 1);
  CHECK(cache->stats().misses == 1);

  // Errors are cached too (deterministic); refusals and timeouts are not.
  CompileJob bad = plain_job();
  bad.source += "int broken(";
  CHECK(c.compile(bad).status == CompileStatus::error);
  CHECK(c.compile(bad).cache_hit);
  CompileJob refused = plain_job();
  refused.source += "#include \"/etc/passwd\"\n";
  CHECK(c.compile(refused).status == CompileStatus::refused);
  CHECK_FALSE(c.compile(refused).cache_hit);
}

TEST_CASE("cache: the LRU keeps within its byte budget", "[sandbox][cache]") {
  CompileCache cache(leap_test::cache_options(3000));
  CompileResult r;
  r.status = CompileStatus::ok;
  r.nvrtc_verdict = true;
  r.ptx.assign(1000, 'p');
  for (int i = 0; i < 5; ++i) {
    CompileJob j = plain_job();
    j.source += std::to_string(i);
    cache.store(make_cache_key(j, "v"), r);
  }
  const CacheStats s = cache.stats();
  CHECK(s.memory_bytes <= 3000);
  CHECK(s.memory_entries == 2);
  CompileJob newest = plain_job();
  newest.source += "4";
  CHECK(cache.find(make_cache_key(newest, "v")).has_value());
  CompileJob oldest = plain_job();
  oldest.source += "0";
  CHECK_FALSE(cache.find(make_cache_key(oldest, "v")).has_value());
}

TEST_CASE("cache: disk tier survives the process, and a corrupt entry is recompiled", "[sandbox][cache]") {
  leap_test::TempDir dir;
  CompileResult original;
  {
    Compiler c(leap_test::config(Isolation::trusted_in_process, 0,
                                 std::make_shared<CompileCache>(leap_test::cache_options(1 << 20, dir.path))));
    original = c.compile(plain_job());
    REQUIRE(original.ok());
  }
  auto cache = std::make_shared<CompileCache>(leap_test::cache_options(1 << 20, dir.path));
  const CacheKey key =
      make_cache_key(plain_job(), "nvrtc " + std::to_string(nvrtc_version().major) + "." +
                                      std::to_string(nvrtc_version().minor) + " " + compat_headers_tag());
  REQUIRE(std::filesystem::exists(cache->entry_path(key)));
  Compiler c(leap_test::config(Isolation::trusted_in_process, 0, cache));
  const CompileResult hit = c.compile(plain_job());
  CHECK(hit.cache_hit);
  CHECK(hit.cubin == original.cubin);
  CHECK(cache->stats().disk_hits == 1);

  SECTION("a flipped byte fails the integrity check") {
    std::string bytes = leap_test::read_file(cache->entry_path(key));
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x5A);
    std::ofstream(cache->entry_path(key), std::ios::binary) << bytes;
  }
  SECTION("a truncated file fails the integrity check") {
    const std::string bytes = leap_test::read_file(cache->entry_path(key));
    std::ofstream(cache->entry_path(key), std::ios::binary) << bytes.substr(0, bytes.size() - 10);
  }
  SECTION("a valid entry stored under the wrong key is not trusted") {
    CompileJob other = plain_job();
    other.source += "\n// other\n";
    const CacheKey other_key = make_cache_key(other, "x");
    cache->store(other_key, original);
    std::filesystem::copy_file(cache->entry_path(other_key), cache->entry_path(key),
                               std::filesystem::copy_options::overwrite_existing);
  }
  cache->clear_memory();
  const CompileResult again = c.compile(plain_job());
  CHECK_FALSE(again.cache_hit);
  CHECK(again.ok());
  CHECK(again.cubin == original.cubin);
  CHECK(cache->stats().corrupt == 1);
  // The recompiled result replaced the bad entry.
  cache->clear_memory();
  CHECK(c.compile(plain_job()).cache_hit);
}

TEST_CASE("cache: several processes and threads share one directory", "[sandbox][cache]") {
  leap_test::TempDir dir;
  std::vector<CompileJob> jobs;
  for (int i = 0; i < 4; ++i) {
    CompileJob j = plain_job();
    j.source += "__global__ void more" + std::to_string(i) + "(int* y) { y[0] = " + std::to_string(i) + "; }\n";
    jobs.push_back(j);
  }
  // Reference bytes, no cache.
  Compiler plain(leap_test::config(Isolation::trusted_in_process, 1));
  const auto expected = plain.compile_batch(jobs);

  // Three processes race to fill the same directory with the same entries (in isolation mode each
  // compile is itself a forked child, so the parents never run NVRTC).
  leap_test::check_in_children(3, [&](int) {
    Compiler c(leap_test::config(Isolation::process, 2,
                                 std::make_shared<CompileCache>(leap_test::cache_options(0, dir.path))));
    const auto got = c.compile_batch(jobs);
    int bad = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) bad += got[i].cubin == expected[i].cubin ? 0 : 1;
    return bad;
  });
  // Every entry is now readable and right; no temporary files are left behind.
  auto cache = std::make_shared<CompileCache>(leap_test::cache_options(0, dir.path));
  std::vector<std::thread> threads;
  std::atomic<int> hits{0}, same{0};
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      Compiler c(leap_test::config(Isolation::trusted_in_process, 1, cache));
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        const CompileResult r = c.compile(jobs[i]);
        hits += r.cache_hit ? 1 : 0;
        same += r.cubin == expected[i].cubin ? 1 : 0;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(hits == 8);
  CHECK(same == 8);
  CHECK(cache->stats().corrupt == 0);
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir.path)) {
    CHECK(e.path().filename().string().rfind(".tmp-", 0) != 0);
  }
}
